import Foundation
import JSONKit
import XCTest

/// The one JSON writer: escapes, numbers, object orders, and that what it writes
/// reads back.
final class JSONWriterTests: XCTestCase {
    func text(_ write: (inout [UInt8]) -> Void) -> String {
        var out = [UInt8]()
        write(&out)
        return String(decoding: out, as: UTF8.self)
    }

    func string(_ s: String) -> String { text { JSONWriter.writeString(s, into: &$0) } }

    func testStringsNeedingEscapes() {
        XCTAssertEqual(string(""), #""""#)
        XCTAssertEqual(string("plain ascii"), #""plain ascii""#)
        XCTAssertEqual(string("a\"b\\c"), #""a\"b\\c""#)
        XCTAssertEqual(string("\n\r\t"), #""\n\r\t""#)
        XCTAssertEqual(string("\u{0}\u{1}\u{8}\u{c}\u{1f}"), #""\u0000\u0001\u0008\u000c\u001f""#)
        XCTAssertEqual(string("del\u{7f} é 日本 😀 /"), "\"del\u{7f} é 日本 😀 /\"")
        XCTAssertEqual(string("\"start and end\""), #""\"start and end\"""#)
        XCTAssertEqual(string("x\u{1}"), #""x\u0001""#)
    }

    func testEscapedSizeIsWhatIsWritten() {
        for s in ["", "abc", "a\"b\\c", "\n\r\t", "\u{0}\u{1f}", "é 日本 😀", String(repeating: "\u{2}x", count: 50)] {
            XCTAssertEqual(JSONWriter.escapedSize(s), string(s).utf8.count, s)
        }
    }

    func testEveryByteRoundTrips() throws {
        var s = ""
        for b in 0..<128 { s.unicodeScalars.append(Unicode.Scalar(UInt8(b))) }
        s += "ÿ€𝄞"
        XCTAssertEqual(try TestValue.parse(string(s)), .string(s))
    }

    func testIntegersMatchStringDescription() {
        for i: Int64 in [0, 1, 9, 10, -1, -9, -10, 42, 1_768_478_400, -1_768_478_400, .max, .min, .min + 1] {
            XCTAssertEqual(text { JSONWriter.writeInteger(i, into: &$0) }, String(i))
        }
    }

    func testFloatsAlwaysReadBackAsFloats() {
        for (d, expected) in [(1.0, "1.0"), (-0.25, "-0.25"), (0.0, "0.0"), (1e16, "1e+16"), (2.5e20, "2.5e+20"), (.leastNonzeroMagnitude, "5e-324"),
                              (9007199254740992.0, "9007199254740992.0"), (0.1, "0.1")] {
            XCTAssertEqual(text { JSONWriter.writeFloat(d, into: &$0) }, expected)
        }
    }

    func testLiteralsArraysAndObjects() {
        XCTAssertEqual(text { out in
            JSONWriter.writeArray([0, 1, 2], into: &out) { n, out in
                switch n {
                case 0: JSONWriter.writeNull(into: &out)
                case 1: JSONWriter.writeBool(true, into: &out)
                default: JSONWriter.writeBool(false, into: &out)
                }
            }
        }, "[null,true,false]")
        XCTAssertEqual(text { JSONWriter.writeArray([Int64](), into: &$0) { _, _ in } }, "[]")
        let members: [String: Int64] = ["b": 2, "a": 1, "B": 3, "é": 4, "": 0]
        XCTAssertEqual(text { JSONWriter.writeCanonicalObject(members, into: &$0) { v, out in JSONWriter.writeInteger(v, into: &out) } },
                       #"{"":0,"B":3,"a":1,"b":2,"é":4}"#)
        XCTAssertEqual(text { JSONWriter.writeObject([("b", 2), ("a", 1)], into: &$0) { v, out in JSONWriter.writeInteger(v, into: &out) } },
                       #"{"b":2,"a":1}"#)
        XCTAssertEqual(text { JSONWriter.writeCanonicalObject([String: Int64](), into: &$0) { _, _ in } }, "{}")
    }
}
