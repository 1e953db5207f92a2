import Foundation
import XCTest
@testable import ScriptHost

/// `LiteralTable` is a fast path for manifests: whatever it accepts must read exactly as
/// the data-only Lua state reads it, and whatever it is unsure of it must leave to that
/// state. These tests compare the two.
final class LiteralTableTests: XCTestCase {
    private func lua(_ table: String) -> ScriptValue? {
        try? LuaDataFile.evaluateInLua(source: "return " + table, displayPath: "t.lua")
    }

    /// Same value, exactly (`exactDescription`: bytes, number kinds, bits).
    private func assertSame(_ fast: ScriptValue, _ slow: ScriptValue?, _ text: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(fast, slow, "\(text)", file: file, line: line)
        XCTAssertEqual(exactDescription(fast), slow.map(exactDescription), "\(text)", file: file, line: line)
    }

    func testPlainManifestsAreReadDirectly() throws {
        let cases: [(String, ScriptValue)] = [
            (#"{ name = "hello" }"#, .object(["name": .string("hello")])),
            ("{}", .object([:])),
            ("{ 1, 2.5, -3, -0.0, true, false, 'x' }",
             .array([.integer(1), .number(2.5), .integer(-3), .number(-0.0), .bool(true), .bool(false), .string("x")])),
            ("{ a = { b = { c = 'd' } }; e = {}, }", .object(["a": .object(["b": .object(["c": .string("d")])]), "e": .object([:])])),
            ("{ a = 1, a = 2 }", .object(["a": .integer(2)])),
            ("{ -- a comment\n  x = 'é… \t' -- another\n}", .object(["x": .string("é… \t")])),
            ("{ n = 000123, f = 0123.50 }", .object(["n": .integer(123), "f": .number(123.5)])),
            ("{ [ 'until' ] = 1, [\"a b\"]= 'c' }", .object(["until": .integer(1), "a b": .string("c")])),
        ]
        for (text, expected) in cases {
            let fast = try XCTUnwrap(LiteralTable.parse(text), text)
            XCTAssertEqual(fast, expected, text)
            assertSame(fast, lua(text), text)
        }
    }

    /// Everything outside the grammar is left to Lua (nil), whether Lua accepts it or not.
    func testAnythingElseIsLeftToLua() {
        let others = [
            #"{ s = "a\nb" }"#, "{ s = [[long]] }", "{ x = nil }", "{ x = 0x10 }", "{ x = 1e3 }", "{ x = .5 }", "{ x = 1. }",
            "{ x = 1234567890123456789 }", "{ x = - 1 }", "{ x = 5a }", "{ [[k]] }", "{ [1] = 1 }", "{ ['k' = 1 }", "{ [=[k]=] = 1 }", "{ end = 1 }", "{ goto = 1 }",
            "{ true = 1 }", "{ 1, a = 2 }", "{ x = y }", "{ x = 1 + 1 }", "{ --[[ c ]] x = 1 }", "{ x = 1 y = 2 }",
            "{ , }", "{ x == 1 }", "{ x = 'unterminated }", "{ x = 'a\u{7F}' }", "{ x = {} ", "{ x = 1 } extra",
            "{ x = 'a\rb' }", String(repeating: "{", count: 17) + String(repeating: "}", count: 17),
            "{ s = '" + String(repeating: "a", count: LiteralTable.maxBytes) + "' }",
        ]
        for text in others { XCTAssertNil(LiteralTable.parse(text), text) }
    }

    /// Every bundled recipe's manifest takes the fast path, and reads as Lua reads it.
    func testTheBundledRecipesTakeTheFastPath() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let folder = root.appendingPathComponent("recipes")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".lua") && !$0.hasSuffix("_test.lua") }.sorted()
        XCTAssertGreaterThanOrEqual(files.count, 4)
        for name in files {
            let source = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            let table = try ManifestLocator.locate(in: source).table
            let fast = try XCTUnwrap(LiteralTable.parse(table), name)
            assertSame(fast, lua(table), name)
        }
    }

    /// A whole data file that returns a table (`LuaDataFile.evaluate`'s fast path):
    /// the chunk's value when it only returns a literal table, else nil.
    func testAReturnedTableReadsAsLuaReadsIt() {
        var generator = Generator(rng: SplitMix(seed: 0xc0f1_9))
        let wrappers: [(String) -> String] = [
            { "return " + $0 }, { "-- hubscript configuration\nreturn " + $0 + "\n" }, { "  return\n" + $0 + ";  -- done" },
            { "return" + $0 }, { "return " + $0 + ";;" }, { "return (" + $0 + ")" }, { "#!/bin/x\nreturn " + $0 },
            { "local x = 1\nreturn " + $0 }, { "return " + $0 + ", 2" }, { "returns " + $0 }, { "return " + $0 + " x" },
        ]
        var accepted = 0
        for k in 0..<1500 {
            let text = wrappers[k % wrappers.count](generator.table(depth: 0))
            guard let fast = LiteralTable.parseReturnedTable(text) else { continue }
            accepted += 1
            assertSame(fast, try? LuaDataFile.evaluateInLua(source: text, displayPath: "c.lua"), text)
        }
        XCTAssertGreaterThan(accepted, 100)
        XCTAssertEqual(LiteralTable.parseReturnedTable("return { a = 1 }"), .object(["a": .integer(1)]))
        XCTAssertNil(LiteralTable.parseReturnedTable("return { a = 1 };;"))
        XCTAssertNil(LiteralTable.parseReturnedTable("return ({ a = 1 })"))
        XCTAssertNil(LiteralTable.parseReturnedTable("\u{FEFF}return { a = 1 }"))
    }

    /// Thousands of generated tables, in and out of the grammar: each one the fast path
    /// accepts reads exactly as Lua reads it, and it accepts a good share of them.
    func testGeneratedTablesReadAsLuaReadsThem() {
        var generator = Generator(rng: SplitMix(seed: 0x5eed_1234))
        var accepted = 0
        let total = 4000
        for _ in 0..<total {
            let text = generator.table(depth: 0)
            guard let fast = LiteralTable.parse(text) else { continue }
            accepted += 1
            assertSame(fast, lua(text), text)
        }
        XCTAssertGreaterThan(accepted, total / 8, "the generator should exercise the fast path")
        XCTAssertLessThan(accepted, total * 9 / 10, "the generator should exercise the fallback")
    }
}


/// Lua table constructors, mostly in the fast path's grammar, sometimes just outside it.
private struct Generator {
    var rng: SplitMix

    mutating func space() -> String {
        rng.pick(["", " ", "  ", "\n", "\t", " -- note\n", "\r\n", "\u{0B}", "\u{0C}", " --[[x]] ", "--\n"])
    }

    mutating func name() -> String {
        rng.pick(["a", "name", "_x", "x1", "Params", "end", "nil", "goto", "true", "and_", "a b", "0a", "k"])
    }

    mutating func number() -> String {
        rng.pick([
            "0", "7", "-7", "-0", "-0.0", "0.0", "1.5", "-2.25", "0.1", "123456789012345678", "1234567890123456789",
            "9223372036854775807", "007", "3.14159265358979323846", "1e3", "0x1F", ".5", "5.", "- 3", "1..2", "2.5e-3",
            "99999999999999999.9", "0.30000000000000004",
        ])
    }

    mutating func string() -> String {
        rng.pick([
            "'x'", "\"hello\"", "''", "\"\"", "'it''s'", "\"a'b\"", "'a\"b'", "'é… ✓'", "'tab\there'", "\"a\\nb\"",
            "'a\\65'", "[[long]]", "'x\ny'", "\"\\\"\"", "'unterminated",
        ])
    }

    mutating func value(depth: Int) -> String {
        switch rng.below(depth > 3 ? 6 : 8) {
        case 0, 1: return number()
        case 2, 3: return string()
        case 4: return rng.pick(["true", "false", "nil", "x", "1 + 1", "-x", "#'ab'"])
        case 5: return rng.pick(["true", "false"])
        default: return table(depth: depth + 1)
        }
    }

    mutating func table(depth: Int) -> String {
        let count = rng.below(depth == 0 ? 6 : 4)
        let style = rng.below(5)   // 0-1 named, 2-3 positional, 4 mixed
        var text = "{" + space()
        for i in 0..<count {
            let named = style < 2 || (style == 4 && rng.below(2) == 0)
            if named {
                let key = rng.below(12) == 0 ? "['\(name())']" : name()
                text += key + space() + rng.pick(["=", "=", "=", "=="]) + space()
            }
            text += value(depth: depth) + space()
            if i < count - 1 || rng.below(3) == 0 { text += rng.pick([",", ",", ";", "", ",,"]) + space() }
        }
        return text + (rng.below(40) == 0 ? "" : "}")
    }
}
