import Foundation
import XCTest
@testable import HubSandbox

/// The sandbox's JSON reader and writer.
final class JSONTests: XCTestCase {
    func parse(_ s: String) throws -> JSON { try JSONParser.parse(Data(s.utf8)) }

    func testRoundTripKeepsKeyOrderAndEscapes() throws {
        let text = #"{"b":1,"a":[true,false,null,-2.5,"x\"y\\z\n\u0001"],"c":{}}"#
        let v = try parse(text)
        XCTAssertEqual(v.objectKeys, ["b", "a", "c"])
        XCTAssertEqual(String(decoding: v.data, as: UTF8.self), text)
    }

    func testUnicodeEscapes() throws {
        XCTAssertEqual(try parse(#""\u00e9\ud83d\ude00""#), .string("é😀"))
        XCTAssertEqual(String(decoding: JSON.string("é😀").data, as: UTF8.self), "\"é😀\"")
    }

    func testMalformedInputThrows() {
        for bad in ["", "{", "{\"a\" 1}", "[1,]", "tru", "\"abc", "{} x", "01a", "\"\u{01}\""] {
            XCTAssertThrowsError(try parse(bad), bad)
        }
    }
}
