import Foundation
import XCTest
@testable import HubClient

/// `HubJSONCanonical` must give exactly `HubJSON.parse(x).encoded()` (or the same
/// error) for every input: the fast path for common shapes, the parser for the rest.
final class CanonicalJSONTests: XCTestCase {
    /// `canonical(text)` equals the parser's result and took `route` (a test of the fast
    /// path must fail if the input fell back to the parser, and the other way round).
    private func assertSameAsParser(_ text: String, route: HubJSONCanonical.Route,
                                    file: StaticString = #filePath, line: UInt = #line) {
        let data = Data(text.utf8)
        let expected = Result { try HubJSON.parse(data).encoded() }
        let actual = Result { try HubJSONCanonical.canonicalRouted(data) }
        switch (expected, actual) {
        case (.success(let e), .success(let a)):
            XCTAssertEqual(String(decoding: a.bytes, as: UTF8.self), String(decoding: e, as: UTF8.self), text, file: file, line: line)
            XCTAssertEqual(a.route, route, "route of \(text)", file: file, line: line)
        case (.failure(let e), .failure(let a)):
            XCTAssertEqual("\(a)", "\(e)", text, file: file, line: line)
        default:
            XCTFail("parser: \(expected), canonical: \(actual) for \(text)", file: file, line: line)
        }
    }

    func testCommonShapesMatchTheParserAndWriter() {
        for text in [
            #"{"id":"evt_1","action":"user.suspended","actor":{"type":"user","id":"usr_admin"},"before":null,"n":42}"#,
            #" { "b" : [ 1 , -2 , 0 , true , false , null , { } , [ ] ] , "a" : "" } "#,
            #"{"z":{"y":{"x":{"w":[{"v":1}]}}},"A":"upper sorts first","_":"underscore"}"#,
            #"{"name":"Zoë Ünïcode ✓ 😀"}"#,
            #"[]"#, #"{}"#, #""plain""#, #"123456789012345"#, #"-7"#,
        ] { assertSameAsParser(text, route: .scanner) }
    }

    func testUnusualValuesTakeTheParserPath() {
        for text in [
            #"{"s":"quote \" backslash \\ slash \/ unicode \u00e9 \ud83d\ude00 newline \n"}"#,
            #"{"n":[1.5, 1e3, 1E-2, 1.0, -0, 1234567890123456, 12345678901234567890, 0.1]}"#,
            #"{"dup":1,"dup":2,"other":3}"#,
            #"{"é":1,"e":2}"#,
            #"{"k\u0041y":true}"#,
            #"1.5"#, #"-0"#, #"0.1"#, #"1234567890123456"#,
        ] { assertSameAsParser(text, route: .parser) }
    }

    func testSyntaxErrorsAreTheParsers() {
        for text in [
            #"{"a":}"#, #"{"a":1,}"#, #"[1 2]"#, #"{"a":01}"#, #"{"a":"x"#, #"{"a":tru}"#, "{\"a\":\"tab\there\"}",
            #"{"a":1} extra"#, "", #"{"a":-}"#, #"[1,]"#,
        ] { assertSameAsParser(text, route: .parser) }
    }

    func testInvalidUTF8IsRepairedAsTheParserDoes() throws {
        var bytes = Array(#"{"s":"a"#.utf8)
        bytes += [0xC3, 0x28]   // a broken two-byte sequence
        bytes += Array(#""}"#.utf8)
        let data = Data(bytes)
        XCTAssertEqual(try HubJSONCanonical.canonical(data), try HubJSON.parse(data).encoded())
    }

    func testNestingBeyondTheParsersLimitIsRefusedTheSameWay() {
        assertSameAsParser(String(repeating: "[", count: 600) + String(repeating: "]", count: 600), route: .parser)
        assertSameAsParser(String(repeating: "[", count: 400) + String(repeating: "]", count: 400), route: .scanner)
    }

    func testPageItemsAreCanonicalAndPageIsDecoded() throws {
        let body = #"{"page":{"next_cursor":"c2","has_more":true},"data":[{"b":1,"a":"x"},{"n":1.5,"a":"\u0041"}],"extra":{"q":[1,{"r":"}"}]}}"#
        let page = try XCTUnwrap(try HubJSONCanonical.page(Data(body.utf8)))
        XCTAssertEqual(page.items.map { String(decoding: $0, as: UTF8.self) }, [#"{"a":"x","b":1}"#, #"{"a":"A","n":1.5}"#])
        XCTAssertEqual(page.page?["next_cursor"]?.stringValue, "c2")
        XCTAssertEqual(page.page?["has_more"]?.boolValue, true)
        XCTAssertEqual(page.route, .scanner, "the page's framing is common")
        XCTAssertEqual(page.parsedItems, 1, "only the item with an escape and a fraction takes the parser")
    }

    func testAPageOfCommonItemsNeverTakesTheParser() throws {
        let body = #"{"data":[{"id":"evt_1","n":2},{"id":"evt_2","tags":["a","b"],"x":null}],"page":{"has_more":false}}"#
        let page = try XCTUnwrap(try HubJSONCanonical.page(Data(body.utf8)))
        XCTAssertEqual(page.route, .scanner)
        XCTAssertEqual(page.parsedItems, 0)
        XCTAssertEqual(page.items.count, 2)
    }

    func testPageWithoutDataOrNotAnObject() throws {
        XCTAssertNil(try HubJSONCanonical.page(Data(#"{"page":{"has_more":false}}"#.utf8)))
        XCTAssertNil(try HubJSONCanonical.page(Data(#"{"data":{"not":"a list"}}"#.utf8)))
        XCTAssertNil(try HubJSONCanonical.page(Data(#"[1,2]"#.utf8)))
        XCTAssertThrowsError(try HubJSONCanonical.page(Data(#"{"data":[1,}"#.utf8))) { error in
            XCTAssertTrue(error is HubJSONSyntaxError, "\(error)")
        }
    }

    func testDuplicateDataMemberKeepsTheLastLikeTheParser() throws {
        let page = try XCTUnwrap(try HubJSONCanonical.page(Data(#"{"data":[1],"data":[{"b":2,"a":1}]}"#.utf8)))
        XCTAssertEqual(page.items.map { String(decoding: $0, as: UTF8.self) }, [#"{"a":1,"b":2}"#])
        XCTAssertEqual(page.route, .parser, "a duplicate member sends the whole page to the parser")
        XCTAssertEqual(page.parsedItems, 1)
    }
}
