import Foundation
import JSONKit
import XCTest

/// The one JSON value: numbers keep their kind in text but compare by value, the
/// canonical bytes are the writer's, and parsing then writing gives those bytes back.
final class JSONValueTests: XCTestCase {
    func parse(_ text: String) throws -> JSONValue {
        var bytes = Array(text.utf8)
        return try bytes.withUnsafeMutableBufferPointer { try JSONValue.parse(UnsafeBufferPointer($0), maxDepth: 64) }
    }

    func text(_ value: JSONValue) -> String { String(decoding: value.canonicalBytes, as: UTF8.self) }

    func testNumbersKeepTheirKindInTextAndCompareByValue() throws {
        XCTAssertEqual(try parse("[1, 1.0, -0, 1e2, 9223372036854775807, 9223372036854775808]"),
                       .array([.integer(1), .number(1), .integer(0), .number(100), .integer(.max), .number(9223372036854775808)]))
        XCTAssertEqual(text(try parse("[1, 1.0, -0, 1e2, 0.5]")), "[1,1.0,0,100.0,0.5]")
        XCTAssertEqual(JSONValue.integer(1), .number(1.0))
        XCTAssertEqual(JSONValue.number(1.0), .integer(1))
        XCTAssertNotEqual(JSONValue.integer(1), .number(1.5))
        XCTAssertNotEqual(JSONValue.integer(9007199254740993), .number(9007199254740992))
        XCTAssertNotEqual(JSONValue.integer(1), .string("1"))
        // Equal values hash alike, so they are one key in a set.
        XCTAssertEqual(Set<JSONValue>([.integer(3), .number(3), .number(3.5), .integer(-0), .number(-0.0)]).count, 3)
    }

    func testTheCanonicalBytesSortKeysAndWriteNonFiniteNumbersAsNull() {
        let value: JSONValue = ["b": [1, 2.5, nil, true], "a": ["z": "é\n\"/", "m": .number(.infinity)], "": .number(.nan)]
        XCTAssertEqual(text(value), #"{"":null,"a":{"m":null,"z":"é\n\"/"},"b":[1,2.5,null,true]}"#)
        XCTAssertEqual(CanonicalJSON(value).text, text(value))
        XCTAssertEqual(CanonicalJSON(value).bytes, value.canonicalBytes)
    }

    func testParsingThenWritingGivesTheCanonicalBytes() throws {
        let text = #" { "b" : [ 1 , 2.50 , "\u00e9\/" ] , "a" : { "y" : null , "x" : false } , "b" : 7 } "#
        // Of a repeated member the last one counts.
        XCTAssertEqual(self.text(try parse(text)), #"{"a":{"x":false,"y":null},"b":7}"#)
        XCTAssertEqual(self.text(try parse(#"[2.50, "\u00e9\/"]"#)), #"[2.5,"é/"]"#)
    }

    func testAccessorsReadTheValueTheyName() throws {
        let value = try parse(#"{"n": 3, "f": 2.0, "big": 9000000000000000, "s": "x", "a": [], "o": {}, "z": null, "t": true}"#)
        XCTAssertEqual(value["n"]?.intValue, 3)
        XCTAssertEqual(value["f"]?.intValue, 2)
        XCTAssertNil(value["big"]?.intValue)
        XCTAssertEqual(value["big"]?.doubleValue, 9e15)
        XCTAssertEqual(value["s"]?.stringValue, "x")
        XCTAssertEqual(value["a"]?.arrayValue, [])
        XCTAssertEqual(value["o"]?.objectValue, [:])
        XCTAssertEqual(value["z"]?.isNull, true)
        XCTAssertEqual(value["t"]?.boolValue, true)
        XCTAssertNil(value["missing"])
        XCTAssertNil(value["s"]?["x"])
    }

    func testMalformedTextIsTheParsersError() {
        XCTAssertThrowsError(try parse(#"{"a": 01}"#)) { error in
            XCTAssertEqual("\(error)", "invalid JSON at byte 9: bad number '01'")
        }
    }
}
