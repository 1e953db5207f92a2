import Foundation
import JSONKit
import XCTest

/// The one JSON parser: strict RFC 8259, errors naming the byte.
final class JSONReaderTests: XCTestCase {
    func parse(_ s: String, maxDepth: Int = 100) throws -> TestValue { try TestValue.parse(s, maxDepth: maxDepth) }

    func assertError(_ text: String, _ message: String, maxDepth: Int = 100, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try parse(text, maxDepth: maxDepth), file: file, line: line) { error in
            XCTAssertEqual("\(error)", message, text, file: file, line: line)
        }
    }

    func testValuesKeepKindsAndOrder() throws {
        XCTAssertEqual(try parse(#" {"b":1,"a":[true,false,null,-2.5,"x\"y\\z\n\u0001"],"c":{}} "#), .object([
            .init(key: "b", value: .number("1", integer: true)),
            .init(key: "a", value: .array([.bool(true), .bool(false), .null, .number("-2.5", integer: false), .string("x\"y\\z\n\u{1}")])),
            .init(key: "c", value: .object([])),
        ]))
    }

    func testUnicodeEscapes() throws {
        XCTAssertEqual(try parse(#""\u00e9\ud83d\ude00\/""#), .string("é😀/"))
        XCTAssertEqual(try parse("\"é😀\""), .string("é😀"))
    }

    /// Surrogates must pair: a lone one (or a high one followed by anything but a low
    /// one, which the sandbox's own parser once turned into an arithmetic overflow) is
    /// an error.
    func testLoneSurrogatesAreRefused() {
        assertError(#""\ud83d""#, "invalid JSON at byte 8: unpaired surrogate")
        assertError(#""\ud800\u0041""#, "invalid JSON at byte 14: unpaired surrogate")
        assertError(#""\ud800x""#, "invalid JSON at byte 8: unpaired surrogate")
        assertError(#""\udc00""#, "invalid JSON at byte 8: unpaired surrogate")
    }

    func testMalformedInputNamesTheByte() {
        assertError("", "invalid JSON at byte 1: unexpected end of input")
        assertError("[1,", "invalid JSON at byte 4: unexpected end of input")
        assertError("[1 2]", "invalid JSON at byte 4: expected ',' or ']'")
        assertError("[1,]", "invalid JSON at byte 4: unexpected character ']'")
        assertError(#"{"a" 1}"#, "invalid JSON at byte 6: expected ':'")
        assertError("{1:2}", "invalid JSON at byte 2: expected a string key")
        assertError("{", "invalid JSON at byte 2: expected a string key")
        assertError(#"{"a":1"#, "invalid JSON at byte 7: unexpected end of input in an object")
        assertError("{} x", "invalid JSON at byte 4: unexpected data after the JSON value")
        assertError("tru", "invalid JSON at byte 4: expected 'true'")
        assertError("'a'", "invalid JSON at byte 1: unexpected character '''")
        assertError(#""a"#, "invalid JSON at byte 3: unterminated string")
        assertError("\"a\nb\"", "invalid JSON at byte 3: control character in a string")
        assertError("\"\u{01}\"", "invalid JSON at byte 2: control character in a string")
        assertError(#""\x""#, "invalid JSON at byte 4: bad escape")
        assertError(#""\u12""#, #"invalid JSON at byte 4: bad \u escape"#)
    }

    /// Each is a number Swift's `Int`/`Double` would read but JSON does not allow,
    /// alone and inside an array (where the parser must not skip past it either).
    func testNumbersOutsideJSONGrammarThrow() {
        // Each input, the error alone, and the error inside an array (one byte later).
        let cases: [(String, String, String)] = [
            ("01", "byte 3: bad number '01'", "byte 4: bad number '01'"),
            ("+1", "byte 1: unexpected character '+'", "byte 2: unexpected character '+'"),
            ("1.", "byte 3: bad number '1.'", "byte 4: bad number '1.'"),
            (".5", "byte 1: unexpected character '.'", "byte 2: unexpected character '.'"),
            ("-", "byte 2: bad number '-'", "byte 3: bad number '-'"),
            ("1e", "byte 3: bad number '1e'", "byte 4: bad number '1e'"),
            ("1e+", "byte 4: bad number '1e+'", "byte 5: bad number '1e+'"),
            ("--1", "byte 2: bad number '-'", "byte 3: bad number '-'"),
            ("-01", "byte 4: bad number '-01'", "byte 5: bad number '-01'"),
            ("00", "byte 3: bad number '00'", "byte 4: bad number '00'"),
            ("1.e3", "byte 3: bad number '1.'", "byte 4: bad number '1.'"),
            ("0x1", "byte 2: unexpected data after the JSON value", "byte 3: expected ',' or ']'"),
            ("1.5.5", "byte 4: unexpected data after the JSON value", "byte 5: expected ',' or ']'"),
            ("Infinity", "byte 1: unexpected character 'I'", "byte 2: unexpected character 'I'"),
            ("NaN", "byte 1: unexpected character 'N'", "byte 2: unexpected character 'N'"),
        ]
        for (bad, alone, inArray) in cases {
            assertError(bad, "invalid JSON at " + alone)
            assertError("[\(bad)]", "invalid JSON at " + inArray)
        }
    }

    func testNumbersInJSONGrammarParse() throws {
        for (text, integer) in [("0", true), ("-0", true), ("120", true), ("1.5", false), ("0.25", false), ("1e3", false),
                                ("1E+2", false), ("-2.5e-1", false), ("12345678901234567890", true)] {
            XCTAssertEqual(try parse(text), .number(text, integer: integer), text)
        }
    }

    func testIntegerValuesMatchInt64() {
        for text in ["0", "-0", "7", "-7", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
                     "-9223372036854775809", "12345678901234567890", "1.0", "1e3"] {
            var value: Int64?? = .none
            var builder = Probe(onNumber: { value = .some($0.int64Value) })
            var bytes = Array(text.utf8)
            _ = bytes.withUnsafeMutableBufferPointer { try? JSONReader.parse(UnsafeBufferPointer($0), maxDepth: 1, into: &builder) }
            let isInteger = !text.contains(".") && !text.contains("e")
            XCTAssertEqual(value, .some(isInteger ? Int64(text) : nil), text)
        }
    }

    func testDepthLimit() throws {
        _ = try parse(String(repeating: "[", count: 100) + String(repeating: "]", count: 100))
        assertError(String(repeating: "[", count: 101) + String(repeating: "]", count: 101),
                    "invalid JSON at byte 101: nesting deeper than 100 levels")
        // A value inside `maxDepth` containers is one level too deep, whatever it is.
        assertError("[[1]]", "invalid JSON at byte 3: nesting deeper than 2 levels", maxDepth: 2)
        XCTAssertEqual(try parse("[[]]", maxDepth: 2), .array([.array([])]))
    }

    /// A builder's refusal is a syntax error at the byte after the value.
    func testBuilderRefusalNamesTheByteAfterTheValue() {
        var bytes: [UInt8] = [0x5B, 0x22, 0xFF, 0x22, 0x5D]   // ["\xFF"]
        var builder = TestValue.Builder()
        XCTAssertThrowsError(try bytes.withUnsafeMutableBufferPointer {
            try JSONReader.parse(UnsafeBufferPointer($0), maxDepth: 10, into: &builder)
        }) { error in
            XCTAssertEqual("\(error)", "invalid JSON at byte 5: string is not valid UTF-8")
        }
    }

    /// A string without escapes is handed over in place; one with escapes unescaped.
    func testStringsWithoutEscapesAreReadInPlace() throws {
        var seen: [(String, Bool)] = []
        var builder = Probe(onString: { seen.append(($0.repaired(), $0.hadEscapes)) })
        var bytes = Array(#"["plain","with \"escape\"",""]"#.utf8)
        _ = try bytes.withUnsafeMutableBufferPointer { try JSONReader.parse(UnsafeBufferPointer($0), maxDepth: 10, into: &builder) }
        XCTAssertEqual(seen.map(\.0), ["plain", "with \"escape\"", ""])
        XCTAssertEqual(seen.map(\.1), [false, true, false])
    }
}

/// Builds nothing; reports each number and string it reads.
struct Probe: JSONBuilder {
    var onNumber: (JSONNumber) -> Void = { _ in }
    var onString: (JSONString) -> Void = { _ in }
    mutating func null() {}
    mutating func bool(_ value: Bool) {}
    mutating func number(_ number: JSONNumber) { onNumber(number) }
    mutating func string(_ string: JSONString) { onString(string) }
    mutating func beginObject() {}
    mutating func key(_ key: JSONString, in object: inout Void) {}
    mutating func member(_ key: Void, _ value: Void, in object: inout Void) {}
    mutating func endObject(_ object: Void) {}
    mutating func beginArray() {}
    mutating func element(_ value: Void, in array: inout Void) {}
    mutating func endArray(_ array: Void) {}
}
