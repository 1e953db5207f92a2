import Foundation
import JSONKit
import XCTest
@testable import HubSandbox

/// The sandbox's JSON values over the one parser and writer (JSONKit; their own tests
/// are JSONKitTests): member order, number kinds, raw text, and the byte writers of
/// timestamps and SQLite text.
final class JSONTests: XCTestCase {
    func parse(_ s: String) throws -> JSON { try JSONParser.parse(Data(s.utf8)) }

    /// `text` is refused with a `JSONSyntaxError` whose description is `message`.
    func assertSyntaxError(_ text: String, _ message: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try parse(text), text, file: file, line: line) { error in
            XCTAssertEqual((error as? JSONSyntaxError)?.description, message, text, file: file, line: line)
        }
    }

    func text(_ v: JSON) -> String { String(decoding: v.data, as: UTF8.self) }

    func testRoundTripKeepsKeyOrderAndEscapes() throws {
        let text = #"{"b":1,"a":[true,false,null,-2.5,"x\"y\\z\n\u0001"],"c":{}}"#
        let v = try parse(text)
        XCTAssertEqual(v.objectKeys, ["b", "a", "c"])
        XCTAssertEqual(String(decoding: v.data, as: UTF8.self), text)
    }

    func testARepeatedMemberReplacesTheFirstInPlace() throws {
        XCTAssertEqual(text(try parse(#"{"a":1,"b":2,"a":3}"#)), #"{"a":3,"b":2}"#)
    }

    func testUnicodeEscapes() throws {
        XCTAssertEqual(try parse(#""\u00e9\ud83d\ude00""#), .string("é😀"))
        XCTAssertEqual(text(.string("é😀")), "\"é😀\"")
    }

    /// A lone surrogate is not JSON the sandbox accepts: replacing it with U+FFFD would
    /// silently change what the client sent, and decoding it must never trap.
    func testLoneSurrogatesAreRefused() {
        let cases = [
            (#""\ud800""#, "invalid JSON at byte 8: unpaired surrogate"),
            (#""\udc00""#, "invalid JSON at byte 8: unpaired surrogate"),
            (#""\ud800\u0041""#, "invalid JSON at byte 14: unpaired surrogate"),
            (#"{"a":"\ud83dx"}"#, "invalid JSON at byte 13: unpaired surrogate"),
        ]
        for (bad, message) in cases {
            assertSyntaxError(bad, message)
        }
    }

    func testMalformedInputThrows() {
        let cases = [
            ("", "invalid JSON at byte 1: unexpected end of input"),
            ("{", "invalid JSON at byte 2: expected a string key"),
            ("{\"a\" 1}", "invalid JSON at byte 6: expected ':'"),
            ("[1,]", "invalid JSON at byte 4: unexpected character ']'"),
            ("tru", "invalid JSON at byte 4: expected 'true'"),
            ("\"abc", "invalid JSON at byte 5: unterminated string"),
            ("{} x", "invalid JSON at byte 4: unexpected data after the JSON value"),
            ("\"\u{01}\"", "invalid JSON at byte 2: control character in a string"),
            ("01", "invalid JSON at byte 3: bad number '01'"),
            ("[1.]", "invalid JSON at byte 4: bad number '1.'"),
        ]
        for (bad, message) in cases {
            assertSyntaxError(bad, message)
        }
    }

    func testNumbersInJSONGrammarParse() throws {
        XCTAssertEqual(try parse("0"), .int(0))
        XCTAssertEqual(try parse("-0"), .int(0))
        XCTAssertEqual(try parse("120"), .int(120))
        XCTAssertEqual(try parse("-7"), .int(-7))
        XCTAssertEqual(try parse("1.5"), .double(1.5))
        XCTAssertEqual(try parse("0.25"), .double(0.25))
        XCTAssertEqual(try parse("1e3"), .double(1000))
        XCTAssertEqual(try parse("1E+2"), .double(100))
        XCTAssertEqual(try parse("-2.5e-1"), .double(-0.25))
        XCTAssertEqual(try parse("[0,-1,2.0]"), .array([.int(0), .int(-1), .double(2)]))
    }

    func testNestingIsCappedAt64Levels() throws {
        _ = try parse(String(repeating: "[", count: 64) + String(repeating: "]", count: 64))
        assertSyntaxError(String(repeating: "[", count: 65) + String(repeating: "]", count: 65), "invalid JSON at byte 65: nesting deeper than 64 levels")
    }

    func testIntegersMatchStringDescription() {
        for i in [0, 1, 9, 10, -1, -9, -10, 42, 1_768_478_400, -1_768_478_400, Int.max, Int.min, Int.min + 1] {
            XCTAssertEqual(text(.int(i)), String(i))
        }
    }

    func testLiteralsAndRaw() {
        XCTAssertEqual(text(.array([.null, .bool(true), .bool(false), .double(1.5), .double(.infinity)])),
                       "[null,true,false,1.5,null]")
        XCTAssertEqual(text(.object([("a", .raw(Array(#"{"x":[1]}"#.utf8))), ("b", .raw([]))])), #"{"a":{"x":[1]},"b":}"#)
    }

    func testTimestampWriterMatchesFormat() {
        for t in [0, 59, 86_399, 86_400, 951_782_400, 1_768_478_400, 4_102_444_799] {
            var out: [UInt8] = []
            Time.writeJSON(t, into: &out)
            XCTAssertEqual(String(decoding: out, as: UTF8.self), "\"" + Time.format(t) + "\"")
        }
    }

    func testCTextWriterMatchesStringWriter() {
        for s in ["", "abc", "a\"b", "tab\there", "é", "日本\n", "\u{7f}\u{1}"] {
            var fast: [UInt8] = [], slow: [UInt8] = []
            s.withCString { $0.withMemoryRebound(to: UInt8.self, capacity: s.utf8.count + 1) { JSON.writeString(cText: $0, into: &fast) } }
            JSONWriter.writeString(s, into: &slow)
            XCTAssertEqual(fast, slow, s)
        }
        // Invalid UTF-8 is repaired as String(cString:) repairs it.
        let bad: [UInt8] = [0x61, 0xFF, 0x62, 0xC3, 0]
        var fast: [UInt8] = [], slow: [UInt8] = []
        bad.withUnsafeBufferPointer { JSON.writeString(cText: $0.baseAddress!, into: &fast) }
        JSONWriter.writeString(bad.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }, into: &slow)
        XCTAssertEqual(fast, slow)
    }
}
