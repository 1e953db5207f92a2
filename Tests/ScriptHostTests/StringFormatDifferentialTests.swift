import XCTest
import ScriptHost

/// `string.format` in a recipe is Lua 5.4's own — results and errors, word for word,
/// called directly (the message names 'format' and the line) or through `pcall` — except
/// where the sandbox must differ: no `%p`, no address in `%s` of a table or function,
/// no opaque handle, a cap on the result. Each case runs in the sandbox and in plain
/// Lua 5.4 (the system's liblua5.4), and the two must agree.
final class StringFormatDifferentialTests: RecipeTestCase {
    /// One call per line: the format and its arguments, as Lua text.
    static let cases: [String] = [
        // %q: literals, and values that have none.
        #""%q", {}"#, #""%q", print"#, #""%q", coroutine.create(print)"#, #""%q", function() end"#,
        #""%q", "a\nb\0c\"\\\r\t\1272""#, #""%q", 1/0"#, #""%q", -1/0"#, #""%q", 0/0"#, #""%q", math.mininteger"#,
        #""%q", math.maxinteger"#, #""%q", 255"#, #""%q", 1.5"#, #""%q", 0.1"#, #""%q", -0.0"#, #""%q", true"#, #""%q", nil"#,
        #""%5q", "x""#, #""%-q", "x""#, #""%q""#,
        // Integers.
        #""%d", {}"#, #""%d", 3.0"#, #""%d", 3.5"#, #""%d", "10""#, #""%d", "0x10""#, #""%d", "x""#, #""%d", nil"#,
        #""%d", true"#, #""%d", 2^63"#, #""%5.2d", 3"#, #""%+d", 3"#, #""% d", 3"#, #""%#d", 3"#, #""%-5d|", 3"#,
        #""%05d", -3"#, #""%i", 42"#, #""%x", 255"#, #""%X", -1"#, #""%#x", 255"#, #""%+x", 1"#, #""%#o", 8"#,
        #""%o", 1.5"#, #""%u", 1"#, #""%c", 65"#, #""%5c", 65"#, #""%-5c|", 65"#, #""%05c", 65"#, #""%c", "x""#,
        #""%.3c", 65"#, #""%d", setmetatable({}, {__name = "MyType"})"#,
        // Floats.
        #""%a", 1.0"#, #""%A", 0.5"#, #""%.3a", 1/3"#, #""%g", 1e300"#, #""%.3f", 2/3"#, #""%10.4e", 12345.678"#,
        #""%G", 1e-10"#, #""%f", "1.5""#, #""%f", {}"#, #""%f", 1/0"#, #""%.99f", 1"#, #""%5.123f", 1"#,
        #""%099.99f", 1"#, #""%#g", 1"#, #""%+.0e", 12345"#, #""%e", 1"#, #""%E", 1"#, #""%F", 1.5"#,
        // Strings.
        #""%s", 1"#, #""%s", 1.5"#, #""%s", true"#, #""%s", nil"#, #""%s", setmetatable({}, {__tostring = function() return "T!" end})"#,
        #""%s", setmetatable({}, {__tostring = function() return 1 end})"#, #""%10s", "ab""#, #""%-10s|", "ab""#,
        #""%.2s", "abc""#, #""%5s", "a\0b""#, #""%s", "a\0b""#, #""%.20s", string.rep("x", 200)"#,
        #""%s", string.rep("y", 300)"#, #""%+s", "x""#, #""%#s", "x""#, #""%5.1s|", "abc""#,
        // The format itself.
        #""%y", 1"#, #""%", 1"#, #""%d""#, #""%d %d", 1"#, #""%123d", 1"#, #""%-+ #0d", 1"#,
        #""%00000000000000000000000d", 1"#, #""%ld", 1"#, #""%5", 1"#, #""%%", 1"#, #""100%%p %d", 3"#, #""a\0%d", 7"#,
        #""%\0d", 1"#, #""%s %q", "x", {}"#, #""%q %s", {}, {}"#, #""%d %s", {}, {}"#, #""no conversions", {}, 1"#,
        #"42"#, #"nil"#, #""%s""#,
    ]

    /// A chunk that runs every case twice — called directly, and through pcall — and
    /// returns one line per call. NUL bytes are shown as <NUL>, newlines as <LF>.
    static var chunk: String {
        var lines = ["local out = {}", "local function show(ok, r) out[#out + 1] = (ok and \"ok \" or \"error \") .. tostring(r):gsub(\"\\0\", \"<NUL>\"):gsub(\"\\n\", \"<LF>\") end"]
        for (k, c) in cases.enumerated() {
            lines.append("show(pcall(function() return string.format(\(c)) end)) -- \(k)")
            lines.append("show(pcall(string.format, \(c)))")
        }
        lines.append("return table.concat(out, \"\\n\")")
        return lines.joined(separator: "\n")
    }

    func testEveryConversionAgreesWithLua54() throws {
        let reference = try ReferenceLua().run(Self.chunk)
        XCTAssertFalse(reference.hasPrefix("error: "), reference)
        let sandboxed = lines(Self.chunk.replacingOccurrences(of: "return table.concat(out, \"\\n\")", with: "print(table.concat(out, \"\\n\"))"))
        let expected = reference.components(separatedBy: "\n")
        let got = sandboxed.joined(separator: "\n").components(separatedBy: "\n")
        XCTAssertEqual(got.count, expected.count)
        for (k, (mine, theirs)) in zip(got, expected).enumerated() where mine != theirs {
            XCTFail("case \(Self.cases[k / 2]) (\(k % 2 == 0 ? "direct" : "through pcall")): sandbox \(mine), Lua \(theirs)")
        }
    }

    /// 3,000 formats made of conversion characters, flags, widths and precisions at
    /// random (a fixed seed), with arguments of every kind that shows no address.
    func testGeneratedFormatsAgreeWithLua54() throws {
        var random = SplitMix(seed: 0x5EED_F0A7)
        let pieces = ["%", "%", "%", "-", "+", " ", "#", "0", "1", "9", "12", "99", "100", ".", ".3", "d", "i", "u", "c", "x", "X", "o",
                      "a", "A", "e", "E", "f", "F", "g", "G", "q", "s", "%%", "l", "h", "z", "y", "\\0", "ab", "\\n"]
        let arguments = ["1", "-7", "3.5", "2^53", "1/0", "0/0", "math.mininteger", "'12'", "'0x1p4'", "'abc'", "'a\\0b'",
                         "true", "nil", "T", "''", "255", "-0.0"]
        var calls: [String] = []
        for _ in 0..<3000 {
            let format = (0..<(1 + random.below(4))).map { _ in random.pick(pieces) }.joined()
            let args = (0..<random.below(4)).map { _ in random.pick(arguments) }
            calls.append((["\"" + format + "\""] + args).joined(separator: ", "))
        }
        var lines = ["local T = setmetatable({}, {__tostring = function() return 'T!' end})", "local out = {}",
                     "local function show(ok, r) out[#out + 1] = (ok and 'ok ' or 'error ') .. tostring(r):gsub('\\0', '<NUL>'):gsub('\\n', '<LF>') end"]
        for call in calls {
            lines.append("show(pcall(function() return string.format(\(call)) end))")
        }
        let chunk = lines.joined(separator: "\n")
        let reference = try ReferenceLua().run(chunk + "\nreturn table.concat(out, '\\n')")
        XCTAssertFalse(reference.hasPrefix("error: "), reference)
        let sandboxed = self.lines(chunk + "\nprint(table.concat(out, '\\n'))").joined(separator: "\n").components(separatedBy: "\n")
        let expected = reference.components(separatedBy: "\n")
        XCTAssertEqual(sandboxed.count, expected.count)
        var differences = 0
        for (k, (mine, theirs)) in zip(sandboxed, expected).enumerated() where mine != theirs {
            differences += 1
            if differences <= 10 { XCTFail("string.format(\(calls[k])): sandbox \(mine), Lua \(theirs)") }
        }
        XCTAssertEqual(differences, 0)
        // Both outcomes are well represented.
        XCTAssertGreaterThan(expected.filter { $0.hasPrefix("ok ") }.count, 300)
        XCTAssertGreaterThan(expected.filter { $0.hasPrefix("error ") }.count, 300)
    }

    /// Where the sandbox differs on purpose.
    func testOnlyAddressesHandlesAndTheCapDiffer() {
        XCTAssertEqual(lines(#"print(string.format("%s|%s|%-8s|%s", {}, print, {}, coroutine.create(print)))"#),
                       ["table|function: builtin|table   |thread"])
        assertFails(#"print(string.format("%p", 1))"#, kind: .runtime,
                    message: "recipes/t.lua:1: string.format: '%p' is not allowed in recipes (it reveals memory addresses)")
        assertFails(#"print(string.format("%d %5p", 1, {}))"#, kind: .runtime,
                    message: "recipes/t.lua:1: string.format: '%p' is not allowed in recipes (it reveals memory addresses)")
    }

    /// Widths count toward the cap on one string: 100,000 '%99s' of empty strings
    /// would build 9.9 MB from 400 KB of format.
    func testWidthsCountTowardTheCap() {
        assertFails(#"local t = {} for i = 1, 100000 do t[i] = "" end print(#string.format(string.rep("%99s", 100000), table.unpack(t)))"#,
                    kind: .runtime,
                    message: "recipes/t.lua:1: string.format would build 43400000 bytes, over the 8 MiB cap on one string")
    }

    func testPercentQOfATableRaisesLikeLua() {
        assertFails(#"print(string.format("%q", {}))"#, kind: .runtime,
                    message: "recipes/t.lua:1: bad argument #2 to 'format' (value has no literal form)")
    }
}
