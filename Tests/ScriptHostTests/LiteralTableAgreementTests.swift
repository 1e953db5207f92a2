import Foundation
import XCTest
@testable import ScriptHost

/// `LiteralTable`, the manifest fast path, agrees with Lua: whenever it returns a value, the
/// data-only Lua state must return exactly that value for `return <text>` (byte for byte:
/// Swift's `==` on strings is canonical equivalence, so the comparison here is on the
/// UTF-8 bytes, on integer vs float, and on the bits of floats); when Lua refuses the
/// text, the fast path must return nil.
final class LiteralTableAgreementTests: XCTestCase {
    private func lua(_ table: String) -> Result<ScriptValue, Error> {
        Result { try LuaDataFile.evaluateInLua(source: "return " + table, displayPath: "t.lua") }
    }

    /// The fast path's answer is Lua's, or nil. Returns whether it answered.
    @discardableResult
    private func check(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> Bool {
        guard let fast = LiteralTable.parse(text) else { return false }
        switch lua(text) {
        case .success(let slow):
            XCTAssertEqual(exactDescription(fast), exactDescription(slow), "\(text.prefix(300).debugDescription)", file: file, line: line)
        case .failure(let error):
            XCTFail("fast path read \(text.prefix(300).debugDescription) as \(exactDescription(fast).prefix(200)); Lua: \(error)", file: file, line: line)
        }
        return true
    }

    // MARK: - Regressions (each one failed before the fix in LiteralTable.swift)

    /// Lua ends a `--` comment at `\r` too: the fast path ate the rest of the line
    /// (`b = 2` here) and returned a table without it.
    func testACommentEndsAtACarriageReturn() throws {
        let text = "{ a = 1, -- c\r b = 2\n }"
        let fast = try XCTUnwrap(LiteralTable.parse(text))
        XCTAssertEqual(exactDescription(fast), exactDescription(.object(["a": .integer(1), "b": .integer(2)])))
        check(text)
        XCTAssertEqual(exactDescription(try XCTUnwrap(LiteralTable.parse("{ 1 --x\r, 2 }"))), "[i1,i2]")
    }

    /// What that meant for a recipe with a lone `\r` after a comment: its manifest lost
    /// the fields after it (here its version and secrets) without a word. (A recipe with
    /// only `\r` line endings is refused earlier: `ManifestLocator` ends comments at `\n`
    /// only, and finds no closing brace.)
    func testAManifestWithCarriageReturnsKeepsItsFields() throws {
        let source = "recipe { -- the manifest\r version = \"1.2\", secrets = { \"hub/key\" },\n  name = \"x\" }\nprint(1)\n"
        let recipe = RecipeFile(displayPath: "recipes/x.lua", url: URL(fileURLWithPath: "/nonexistent/x.lua"), source: source)
        let manifest = try RecipeManifest.load(from: recipe)
        XCTAssertEqual(manifest.name, "x")
        XCTAssertEqual(manifest.version, "1.2")
        XCTAssertEqual(manifest.secrets, ["hub/key"])
    }

    /// ... and so text after such a comment is text Lua reads: the fast path accepted
    /// trailing junk Lua refuses.
    func testTextAfterACarriageReturnCommentIsNotSkipped() {
        XCTAssertNil(LiteralTable.parse("{ } -- c\rjunk"))
        guard case .failure(let error) = lua("{ } -- c\rjunk") else { return XCTFail("Lua accepted it") }
        XCTAssertEqual("\(error)", "t.lua:2: <eof> expected near 'junk'")
    }

    /// Nested lists whose pending items need more than Lua's 255 registers: Lua refuses
    /// the text, the fast path read it.
    func testListsNeedingTooManyRegistersAreLeftToLua() {
        let text = Self.nestedLists(levels: 7, itemsBefore: 49)
        XCTAssertNil(LiteralTable.parse(text))
        guard case .failure(let error) = lua(text) else { return XCTFail("Lua accepted it") }
        XCTAssertEqual("\(error)", "t.lua:1: function or expression needs too many registers near '1'")
        // Well inside the limit, the fast path still reads such lists.
        let small = Self.nestedLists(levels: 3, itemsBefore: 49)
        XCTAssertTrue(check(small))
        XCTAssertTrue(check(Self.nestedLists(levels: 16, itemsBefore: 5)))
        // Every shape up to 16 levels: where the fast path answers, Lua agrees.
        var answered = 0
        for levels in 1...16 {
            for items in stride(from: 0, through: 55, by: 5) where check(Self.nestedLists(levels: levels, itemsBefore: items)) { answered += 1 }
        }
        XCTAssertGreaterThan(answered, 100)
        // Flushed items hold no register: a long flat list is fine.
        XCTAssertTrue(check("{" + String(repeating: "1,", count: 5000) + "{" + String(repeating: "2,", count: 100) + "}}"))
    }

    /// `{ 1, ..., { 1, ..., { ... } } }`: `itemsBefore` items before each nested list.
    static func nestedLists(levels: Int, itemsBefore: Int) -> String {
        let items = Array(repeating: "1", count: itemsBefore).joined(separator: ",")
        var text = "{}"
        for _ in 1..<levels { text = "{" + items + "," + text + "}" }
        return text
    }

    /// Two keys Swift calls equal ("é" precomposed and decomposed) are two keys to Lua;
    /// which one its reader keeps is its hash order's business: left to Lua.
    func testCanonicallyEqualKeysAreLeftToLua() {
        for (a, b) in [("\u{e9}", "e\u{301}"), ("e\u{301}", "\u{e9}"), ("\u{212B}", "\u{C5}"), ("\u{1E9B}\u{323}", "\u{17F}\u{323}\u{307}")] {
            XCTAssertNil(LiteralTable.parse("{ [\"\(a)\"] = 1, [\"\(b)\"] = 2 }"), a.debugDescription)
            XCTAssertNil(LiteralTable.parse("{ [\"\(a)\"] = 1, x = 3, ['\(b)'] = 2 }"), a.debugDescription)
        }
        // The same bytes twice is an ordinary duplicate: the last one wins, as in Lua.
        XCTAssertTrue(check("{ [\"\u{e9}\"] = 1, [\"\u{e9}\"] = 2 }"))
        XCTAssertTrue(check("{ [\"e\u{301}\"] = 1, ['e\u{301}'] = 2 }"))
    }

    /// Inputs that are fine for both and must stay so (edges of the grammar).
    func testEdgesReadAsLuaReadsThem() {
        let texts = [
            "{ a = 1 -- \u{0}junk\n }", "{ x = 1\u{0B}, y = 2\u{0C} }", "{ x = 1 }--", "{ x = 1 } -- c",
            "{ x = 123456789012345678 }", "{ x = -123456789012345678 }", "{ x = 999999999999999999.99999999999999999999 }",
            "{ x = 0.00000000000000000001 }", "{ x = -0 }", "{ x = -0.0 }", "{ x = 1.0, y = 1, z = 1000000000000000.0, w = 1000000000000000 }",
            "{ 1000000000000000, 1000000000000000.0, 1000000000000000 }", "{ [''] = 1 }", "{ ['1'] = 'x', ['-1'] = 'y' }",
            "{ _ENV = 1, _G = 2, self = 3 }", "{ '\u{2028}\u{FEFF}\u{10FFFF}' }",
            "{ " + String(repeating: "a", count: 40_000) + " = 1 }",
            "{ [ --c\n 'k' --d\n ] --e\n = --f\n 1 }", "{ x = 'a--b', ['--'] = '[[' }", "{ -- [[ not long\n x = 1 }",
        ]
        for text in texts { XCTAssertTrue(check(text), text.prefix(80).debugDescription) }
        for text in ["{ x = 1 } \u{0}", "{ \u{2028} }", "{ x = 0.000000000000000000001 }", "{ x = 1 }\u{A0}", "\u{FEFF}{ }", "{ x\u{A0}= 1 }", "{ x = 1 --[==[c]==] }", "{ --[\n x = 1 }"] {
            XCTAssertNil(LiteralTable.parse(text), text.debugDescription)
        }
    }

    /// Lua's limits: the largest inputs the fast path takes are far within them, and
    /// nothing crashes or hangs near 64 KiB or at any depth.
    func testHugeAndDeepInputs() {
        let max = LiteralTable.maxBytes
        XCTAssertTrue(check("{" + String(repeating: "{},", count: (max - 2) / 3) + "}"))
        let deep = String(repeating: "{", count: 15) + String(repeating: "}", count: 15) + ","
        XCTAssertTrue(check("{" + String(repeating: deep, count: (max - 2) / deep.utf8.count) + "}"))
        var keyed = "{"
        var i = 0
        while keyed.utf8.count < max - 40 { keyed += "k\(i)={a\(i)='\(i)'},"; i += 1 }
        XCTAssertTrue(check(keyed + "}"))
        XCTAssertTrue(check("{ '" + String(repeating: "\u{10FFFF}", count: (max - 8) / 4) + "' }"))
        XCTAssertNil(LiteralTable.parse("{" + String(repeating: "{},", count: max / 3) + "}"), "over 64 KiB")
        // Deep nesting fails fast (no recursion past maxDepth).
        XCTAssertNil(LiteralTable.parse(String(repeating: "{", count: 30_000) + String(repeating: "}", count: 30_000)))
        XCTAssertNil(LiteralTable.parse(String(repeating: "{a=", count: 20_000) + "1" + String(repeating: "}", count: 20_000)))
        XCTAssertTrue(check(String(repeating: "{a=", count: 16) + "1" + String(repeating: "}", count: 16)))
        XCTAssertNil(LiteralTable.parse(String(repeating: "{a=", count: 17) + "1" + String(repeating: "}", count: 17)))
    }

    // MARK: - Differential fuzzer

    /// Generated and mutated tables, well beyond the grammar: each one the fast path
    /// answers reads exactly as Lua reads it. Deterministic; bounded to about 5 s.
    func testFuzzedTablesReadAsLuaReadsThem() {
        var fuzzer = Fuzzer(rng: SplitMix(seed: 0xA77A_C5_2026))
        var answered = 0, total = 0
        let deadline = Date().addingTimeInterval(5)
        while total < 40_000 && Date() < deadline {
            let text = fuzzer.input()
            total += 1
            if check(text) { answered += 1 }
        }
        print("LiteralTableAgreementTests: \(total) inputs, \(answered) read by the fast path")
        XCTAssertGreaterThan(total, 1000)
        XCTAssertGreaterThan(answered, total / 10, "the fuzzer should reach the fast path")
        XCTAssertLessThan(answered, total * 9 / 10, "the fuzzer should reach the fallback")
    }
}


private struct Fuzzer {
    var rng: SplitMix

    static let spaces = [
        " ", " ", "", "\t", "\n", "\r", "\r\n", "\n\r", "\u{0B}", "\u{0C}", "-- c\n", "-- c\r", "--\r", "--\n", "--",
        "-- \u{0}\n", "--[ x\n", "--[[x]]", "--[==[x]==]", "--[=x\n", "\u{A0}", "\u{2003}", "\u{0}", " --é\n",
    ]
    static let nameChars = Array("abcxyzAZ_019")
    static let keywords = ["and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if", "in",
                           "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while"]
    static let stringChars = ["a", "b", " ", "\t", "\r", "\n", "\\", "\\n", "\\65", "\\x41", "\\z", "\"", "'", "\u{0}", "\u{7F}", "\u{1}",
                              "\u{e9}", "e\u{301}", "\u{301}", "✓", "\u{1F600}", "\u{FEFF}", "\u{2028}", "]", "[", "=", "--", "{", "}", "\u{85}"]

    mutating func space() -> String {
        rng.chance(3) ? rng.pick(Self.spaces) + (rng.chance(4) ? rng.pick(Self.spaces) : "") : rng.pick([" ", "", "\n"])
    }

    mutating func name() -> String {
        if rng.chance(8) { return rng.pick(Self.keywords) + (rng.chance(4) ? "_" : "") }
        if rng.chance(10) { return rng.pick(["é", "0a", "a-b", "a.b", "a b", "A", "_", "__", "a1"]) }
        if rng.chance(3) { return rng.pick(["a", "b", "name", "x"]) }   // duplicates
        var s = String(rng.pick(Array("abcxyzAZ_")))
        for _ in 0..<rng.below(6) { s.append(rng.pick(Self.nameChars)) }
        return s
    }

    mutating func digits(_ n: Int) -> String { String((0..<n).map { _ in rng.pick(Array("0123456789")) }) }

    mutating func number() -> String {
        if rng.chance(6) {
            return rng.pick(["1e3", "1E-2", "0x1F", "0X1p4", ".5", "5.", "- 3", "1..2", "--1", "-", "0x", "1e", "3ee", "9223372036854775807",
                             "-9223372036854775808", "9223372036854775808", "1.7976931348623157e308", "inf", "nan", "00", "-00.00"])
        }
        var s = rng.chance(3) ? "-" : ""
        let intDigits = rng.chance(5) ? 15 + rng.below(6) : 1 + rng.below(4)
        s += rng.chance(3) ? "0" + digits(intDigits - 1) : digits(intDigits)
        if rng.chance(2) {
            let fracDigits = rng.chance(5) ? 15 + rng.below(8) : 1 + rng.below(4)
            s += "." + (rng.chance(4) ? String(repeating: "0", count: fracDigits) : digits(fracDigits))
        }
        return s
    }

    mutating func stringBody() -> String {
        var s = ""
        for _ in 0..<rng.below(8) { s += rng.chance(3) ? rng.pick(Self.stringChars) : rng.pick(["a", "b", "é", " ", "x"]) }
        return s
    }

    mutating func string() -> String {
        let q = rng.pick(["\"", "'"])
        if rng.chance(20) { return "[[" + stringBody() + "]]" }
        return q + stringBody() + (rng.chance(40) ? "" : q)
    }

    mutating func key() -> String {
        switch rng.below(10) {
        case 0: return "[" + space() + string() + space() + "]"
        case 1: return "[" + rng.pick(["\"\u{e9}\"", "\"e\u{301}\"", "'\u{e9}'", "'a'", "\"name\"", "1", "1.5", "true", "'1'", "[a]", "=[a]="]) + "]"
        default: return name()
        }
    }

    mutating func value(depth: Int) -> String {
        switch rng.below(depth > 14 ? 9 : 11) {
        case 0, 1, 2: return number()
        case 3, 4, 5: return string()
        case 6: return rng.pick(["true", "false", "true", "false", "nil", "x", "1 + 1", "-x", "#'ab'", "truex", "false1", "{}", "()", "..."])
        case 7, 8: return rng.pick(["true", "false", "{}"])
        default: return table(depth: depth + 1)
        }
    }

    mutating func table(depth: Int) -> String {
        // Sometimes a long positional list, to press on Lua's registers.
        let count = rng.chance(6) ? 40 + rng.below(30) : rng.below(depth == 0 ? 7 : 4)
        let style = rng.below(5)   // 0-1 keyed, 2-3 positional, 4 mixed
        var text = "{" + space()
        for i in 0..<count {
            let keyed = style < 2 || (style == 4 && rng.chance(2))
            if keyed { text += key() + space() + (rng.chance(25) ? rng.pick(["==", ":", ""]) : "=") + space() }
            // In long lists, put the nested table last so the pending items stay live.
            text += (count > 30 && i < count - 1 ? rng.pick(["1", "'s'", "true", "2.5"]) : value(depth: depth)) + space()
            if i < count - 1 || rng.chance(3) { text += rng.chance(15) ? rng.pick(["", ",,", ", ;"]) : rng.pick([",", ";"]) + space() }
        }
        return text + (rng.chance(60) ? "" : "}")
    }

    /// Nested lists with many items pending at each level (Lua's registers), and
    /// keyed tables whose keys Swift calls equal but Lua does not.
    mutating func stress() -> String {
        if rng.chance(2) {
            let pool = ["\u{e9}", "e\u{301}", "\u{C5}", "\u{212B}", "A\u{30A}", "a", "\u{1E9B}\u{323}", "\u{17F}\u{323}\u{307}"]
            let fields = (0..<(1 + rng.below(5))).map { i in "[\"\(rng.pick(pool))\"] = \(i)" }
            return "{ " + fields.joined(separator: ", ") + " }"
        }
        var text = "{}"
        for _ in 0..<(1 + rng.below(9)) {
            let items = Array(repeating: rng.pick(["1", "'s'", "true"]), count: rng.below(60)).joined(separator: ",")
            text = rng.chance(5) ? "{ k = " + text + " }" : "{" + items + (items.isEmpty ? "" : ",") + text + "}"
        }
        return text
    }

    mutating func input() -> String {
        if rng.chance(10) { return stress() }
        var text = table(depth: 0)
        if rng.chance(8) { text += rng.pick([" ", "--x", "-- x\rjunk", "--x\r", ";", "}", ",", "\u{0}", "\n\n", "{}", "--[[x]]"]) }
        if rng.chance(4) { text = mutate(text) }
        return text
    }

    /// One to three edits on the scalars: delete, duplicate, or insert a token.
    mutating func mutate(_ text: String) -> String {
        var scalars = Array(text.unicodeScalars)
        for _ in 0...rng.below(3) where !scalars.isEmpty {
            let at = rng.below(scalars.count)
            switch rng.below(3) {
            case 0: scalars.remove(at: at)
            case 1:
                let end = min(scalars.count, at + 1 + rng.below(12))
                scalars.insert(contentsOf: scalars[at..<end], at: at)
            default:
                let token = rng.pick(["\r", "--", "-", "\\", "'", "\"", "[", "]", "=", ".", "e", "x", "0", "{", "}", ",", "\u{0}", "\u{301}", " "])
                scalars.insert(contentsOf: token.unicodeScalars, at: at)
            }
        }
        var out = String.UnicodeScalarView()
        out.append(contentsOf: scalars)
        return String(out)
    }
}
