import Foundation
import XCTest
import ScriptHost

/// `JSONCodec` (Swift) and the `json` module (Lua) under the bridging rules:
/// integers stay integers, floats stay floats, keys are sorted, `[]` and `{}` keep
/// their kind, `json.null` is explicit.
final class JSONCodecTests: RecipeTestCase {
    private func nested(_ levels: Int) -> ScriptValue {
        var v: ScriptValue = .array([])
        for _ in 1..<levels { v = .array([v]) }
        return v
    }

    private func assertEncodeError(_ value: ScriptValue, _ message: String,
                                   file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try JSONCodec.encode(value), file: file, line: line) { error in
            XCTAssertEqual((error as? JSONCodec.Error)?.message, message, file: file, line: line)
        }
    }

    private func assertDecodeError(_ text: String, _ message: String,
                                   file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try JSONCodec.decode(text), file: file, line: line) { error in
            XCTAssertEqual((error as? JSONCodec.Error)?.message, message, file: file, line: line)
        }
    }

    // MARK: Swift encoding

    func testEncodesScalarsCanonically() throws {
        XCTAssertEqual(try JSONCodec.encode(.integer(1)), "1")
        XCTAssertEqual(try JSONCodec.encode(.integer(Int64.min)), "-9223372036854775808")
        XCTAssertEqual(try JSONCodec.encode(.number(1)), "1.0")
        XCTAssertEqual(try JSONCodec.encode(.number(-0.5)), "-0.5")
        XCTAssertEqual(try JSONCodec.encode(.number(2.5e20)), "2.5e+20")
        XCTAssertEqual(try JSONCodec.encode(.bool(false)), "false")
        XCTAssertEqual(try JSONCodec.encode(.null), "null")
        XCTAssertEqual(try JSONCodec.encode(.nilValue), "null")
        XCTAssertEqual(try JSONCodec.encode(.string("é\"\\\n\r\t\u{1}/")), #""é\"\\\n\r\t\u0001/""#)
    }

    func testEncodesContainersWithSortedKeys() throws {
        XCTAssertEqual(try JSONCodec.encode(.array([])), "[]")
        XCTAssertEqual(try JSONCodec.encode(.object([:])), "{}")
        XCTAssertEqual(try JSONCodec.encode(["b": 1, "a": ["z": [1, 2.0, "x"], "y": .null], "A": true]),
                       #"{"A":true,"a":{"y":null,"z":[1,2.0,"x"]},"b":1}"#)
    }

    func testRefusesWhatJSONCannotHold() {
        assertEncodeError(.bytes([0xFF]), "cannot encode a string that is not valid UTF-8")
        assertEncodeError(.number(.infinity), "cannot encode inf (JSON has no NaN or infinity)")
        assertEncodeError(.number(-.infinity), "cannot encode -inf (JSON has no NaN or infinity)")
        assertEncodeError(.number(.nan), "cannot encode nan (JSON has no NaN or infinity)")
        assertEncodeError(.function(ScriptFunction("f") { _ in .none }), "cannot encode a function")
        assertEncodeError(["k": [.bytes([0xC3])]], "cannot encode a string that is not valid UTF-8")
    }

    func testEncodeDepthLimitIsTheDecodeLimit() throws {
        // One limit both ways: what encodes decodes, and 101 levels do neither.
        let deepest = try JSONCodec.encode(nested(100))
        XCTAssertEqual(deepest.count, 200)
        XCTAssertEqual(try JSONCodec.decode(deepest), nested(100))
        assertEncodeError(nested(101), "cannot encode: nesting deeper than 100 levels (a cycle?)")
        assertDecodeError(String(repeating: "[", count: 101) + String(repeating: "]", count: 101), "invalid JSON at byte 101: nesting deeper than 100 levels")
    }

    // MARK: Swift decoding

    func testDecodesKindsExactly() throws {
        XCTAssertEqual(try JSONCodec.decode("1"), .integer(1))
        XCTAssertEqual(try JSONCodec.decode("-0"), .integer(0))
        XCTAssertEqual(try JSONCodec.decode("1.0"), .number(1))
        XCTAssertEqual(try JSONCodec.decode("1e2"), .number(100))
        XCTAssertEqual(try JSONCodec.decode("-2.5E-3"), .number(-0.0025))
        XCTAssertEqual(try JSONCodec.decode("9223372036854775807"), .integer(Int64.max))
        XCTAssertEqual(try JSONCodec.decode(" [ ] "), .array([]))
        XCTAssertEqual(try JSONCodec.decode("{}"), .object([:]))
        XCTAssertEqual(try JSONCodec.decode("null"), .null)
        XCTAssertEqual(try JSONCodec.decode(#"{"a":[true,false,null,{"b":"c"}]}"#),
                       ["a": [true, false, .null, ["b": "c"]]])
        XCTAssertEqual(try JSONCodec.decode(#""\u00e9\ud83d\ude00\/\b\f""#), .string("é😀/\u{8}\u{C}"))
    }

    func testDecodeRoundTripsEncode() throws {
        let value: ScriptValue = ["list": [1, 1.5, "two", .null, [], [:]], "n": -3, "f": 1.0, "s": "ü\n"]
        let text = try JSONCodec.encode(value)
        XCTAssertEqual(text, #"{"f":1.0,"list":[1,1.5,"two",null,[],{}],"n":-3,"s":"ü\n"}"#)
        XCTAssertEqual(try JSONCodec.decode(text), value)
        XCTAssertEqual(try JSONCodec.encode(try JSONCodec.decode(text)), text)
    }

    func testDecodeErrors() {
        assertDecodeError("", "invalid JSON at byte 1: unexpected end of input")
        assertDecodeError("[1,", "invalid JSON at byte 4: unexpected end of input")
        assertDecodeError("[1 2]", "invalid JSON at byte 4: expected ',' or ']'")
        assertDecodeError(#"{"a" 1}"#, "invalid JSON at byte 6: expected ':'")
        assertDecodeError("{1:2}", "invalid JSON at byte 2: expected a string key")
        assertDecodeError("{} x", "invalid JSON at byte 4: unexpected data after the JSON value")
        assertDecodeError("tru", "invalid JSON at byte 4: expected 'true'")
        assertDecodeError("'a'", "invalid JSON at byte 1: unexpected character '''")
        assertDecodeError(#""a"#, "invalid JSON at byte 3: unterminated string")
        assertDecodeError("\"a\nb\"", "invalid JSON at byte 3: control character in a string")
        assertDecodeError(#""\x""#, "invalid JSON at byte 4: bad escape")
        assertDecodeError(#""\ud83d""#, "invalid JSON at byte 8: unpaired surrogate")
        assertDecodeError("-", "invalid JSON at byte 2: bad number '-'")
        assertDecodeError(String(repeating: "[", count: 102) + String(repeating: "]", count: 102),
                          "invalid JSON at byte 101: nesting deeper than 100 levels")
    }

    func testDecodeRefusesInvalidUTF8() {
        XCTAssertThrowsError(try JSONCodec.decode(Data([0x22, 0xFF, 0x22]))) { error in
            XCTAssertEqual((error as? JSONCodec.Error)?.message, "invalid JSON at byte 4: string is not valid UTF-8")
        }
    }

    // MARK: The json module in Lua

    func testLuaEncodeKeepsKinds() {
        let source = """
        print(json.encode(1), json.encode(1.0), json.encode(-0.25), json.encode(math.maxinteger))
        print(json.encode({}), json.encode(json.array{}), json.encode(json.array{ 1, 2 }), json.encode(json.null))
        print(json.encode({ b = 1, a = { d = { 3, 2, 1 }, c = 1.0 }, ["A"] = "x" }))
        print(json.encode("q\\"\\n"), json.encode(true), json.encode(nil))
        """
        XCTAssertEqual(lines(source), [
            "1\t1.0\t-0.25\t9223372036854775807",
            "{}\t[]\t[1,2]\tnull",
            #"{"A":"x","a":{"c":1.0,"d":[3,2,1]},"b":1}"#,
            #""q\"\n"\#ttrue\#tnull"#,
        ])
    }

    func testLuaDecodeKeepsKinds() {
        let source = """
        local v = json.decode('{"i":1,"f":1.0,"e":1e3,"a":[],"o":{},"n":null,"s":"x","l":[1,[2]]}')
        print(math.type(v.i), math.type(v.f), math.type(v.e), v.n == json.null, v.s, v.l[2][1])
        print(json.encode(v.a), json.encode(v.o), json.encode(v))
        print(json.encode(json.decode("[]")), json.encode(json.decode("{}")), json.decode("null") == json.null)
        """
        XCTAssertEqual(lines(source), [
            "integer\tfloat\tfloat\ttrue\tx\t2",
            #"[]\#t{}\#t{"a":[],"e":1000.0,"f":1.0,"i":1,"l":[1,[2]],"n":null,"o":{},"s":"x"}"#,
            "[]\t{}\ttrue",
        ])
    }

    func testLuaJsonNullIsASentinel() {
        XCTAssertEqual(lines("print(tostring(json.null), type(json.null), getmetatable(json.null))"),
                       ["null\ttable\tjson.null"])
        assertFails("json.null.x = 1", kind: .runtime, message: "recipes/t.lua:1: json.null cannot be modified")
    }

    func testLuaEncodeRefusesCycles() {
        assertFails("local a = { } a.b = { a = a } json.encode(a)", kind: .runtime,
                    message: "recipes/t.lua:1: bad argument #1 to 'json.encode' (table contains a cycle)")
    }

    func testLuaEncodeRefusesDepthOver100() {
        assertFails("local v = {} for i = 1, 100 do v = { v } end json.encode(v)", kind: .runtime,
                    message: "recipes/t.lua:1: bad argument #1 to 'json.encode' (table nesting deeper than 100 levels)")
        XCTAssertEqual(lines("local v = {} for i = 1, 99 do v = { v } end print(#json.encode(v))"), ["200"])
    }

    func testLuaEncodeRefusesNonUTF8() {
        assertFails(#"json.encode({ name = "\xff" })"#, kind: .runtime,
                    message: "recipes/t.lua:1: json.encode: cannot encode a string that is not valid UTF-8")
        assertFails(#"json.encode({ ["\xff"] = 1 })"#, kind: .runtime,
                    message: "recipes/t.lua:1: bad argument #1 to 'json.encode' (table key is not valid UTF-8)")
    }

    func testLuaEncodeRefusesMixedAndSparseTables() {
        assertFails("json.encode({ 1, 2, x = 3 })", kind: .runtime, message:
            "recipes/t.lua:1: bad argument #1 to 'json.encode' (table mixes string keys and integer keys; use one or the other)")
        assertFails("json.encode({ 1, nil, 3 })", kind: .runtime, message:
            "recipes/t.lua:1: bad argument #1 to 'json.encode' (table is not a sequence: key 2 is missing (keys must be 1..2))")
        assertFails("json.encode({ [0] = 'zero' })", kind: .runtime, message:
            "recipes/t.lua:1: bad argument #1 to 'json.encode' (table is not a sequence: key 1 is missing (keys must be 1..1))")
    }

    func testLuaEncodeRefusesNaNAndInfinity() {
        assertFails("json.encode(math.huge)", kind: .runtime,
                    message: "recipes/t.lua:1: json.encode: cannot encode inf (JSON has no NaN or infinity)")
        assertFails("json.encode({ -math.huge })", kind: .runtime,
                    message: "recipes/t.lua:1: json.encode: cannot encode -inf (JSON has no NaN or infinity)")
    }

    func testLuaArgumentErrors() {
        let cases: [(String, String)] = [
            ("json.encode()", "bad argument #1 to 'json.encode' (value expected, got no value)"),
            ("json.encode(print)", "bad argument #1 to 'json.encode' (cannot convert a function value)"),
            ("json.decode()", "bad argument #1 to 'json.decode' (string expected, got no value)"),
            ("json.decode(nil)", "bad argument #1 to 'json.decode' (string expected, got nil)"),
            ("json.decode({})", "bad argument #1 to 'json.decode' (string expected, got table)"),
            ("json.array(1)", "bad argument #1 to 'json.array' (table expected, got number)"),
        ]
        for (call, message) in cases {
            let outcome = harness.run(call)
            XCTAssertEqual(outcome.failure?.kind, .runtime, call)
            XCTAssertEqual(outcome.message, "recipes/t.lua:1: " + message, call)
        }
    }

    func testLuaDecodeErrors() {
        assertFails(#"json.decode("[1,")"#, kind: .runtime,
                    message: "recipes/t.lua:1: json.decode: invalid JSON at byte 4: unexpected end of input")
        XCTAssertEqual(lines(#"print(pcall(json.decode, "{"))"#),
                       ["false\tjson.decode: invalid JSON at byte 2: expected a string key"])
    }

    func testNumbersFollowTheJSONGrammar() throws {
        assertDecodeError("01", "invalid JSON at byte 3: bad number '01'")
        assertDecodeError("1.", "invalid JSON at byte 3: bad number '1.'")
        assertDecodeError("1e", "invalid JSON at byte 3: bad number '1e'")
        assertDecodeError("1e400", "invalid JSON at byte 6: number '1e400' is out of range")
        XCTAssertEqual(try JSONCodec.decode("-0"), .integer(0))
        XCTAssertEqual(try JSONCodec.decode("1.5e-3"), .number(0.0015))
        XCTAssertEqual(try JSONCodec.decode("12345678901234567890"), .number(12345678901234567890.0))
    }

    func testDecodeAndEncodeAgreeOnTheNestingLimit() throws {
        // Regression: decode accepted 101 levels that the Lua reader then refused.
        // Both now stop at 100: what decodes re-encodes.
        let deepest = #"print(#json.encode(json.decode(string.rep("[", 100) .. string.rep("]", 100))))"#
        XCTAssertEqual(harness.run(deepest).lines, ["200"])
        let tooDeep = harness.run(#"json.decode(string.rep("[", 101) .. string.rep("]", 101))"#)
        XCTAssertEqual(tooDeep.message, "recipes/t.lua:1: json.decode: invalid JSON at byte 101: nesting deeper than 100 levels")
    }
}
