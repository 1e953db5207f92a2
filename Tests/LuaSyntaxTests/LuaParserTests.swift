import Foundation
import XCTest
@testable import ScriptHost
@testable import LuaSyntax

final class LuaParserTests: XCTestCase {
    /// Every construct of Lua 5.4's grammar, in one chunk Lua itself accepts.
    static let everyConstruct = #"""
    #!/usr/bin/env lua
    local a, b <const>, c <close> = 1, 2.5e-3, nil
    local h, s1, s2 = 0xFF, 'it\'s', "tab\tnew\nline \x41\65\u{48}\z
          continued"
    local long = [==[
    a ]] long ]=] string]==]
    --[[ a long
    comment ]] --[=[ another ]=]
    local t = { 1, 2; x = 3, ["y"] = 4, [5] = function(...) return ... end, }
    t.x, t["y"] = t.x + 1, #t
    local function fact(n) if n <= 1 then return 1 else return n * fact(n - 1) end end
    function t.f(x, ...) local v = select("#", ...) return x, v end
    function t:m(y) return self.x + y end
    for i = 1, 10, 2 do a = a + i end
    for k, v in pairs(t) do a = k, v end
    while a > 0 do a = a - 1; if a == 3 then break end end
    repeat local r = a until r == nil or r >= 0
    do local inner = 1; a = inner end
    if a then a = 1 elseif b then a = 2 elseif c then a = 3 else a = 4 end
    goto skip
    ::skip::
    local ops = 1 + 2 - 3 * 4 / 5 // 6 % 7 ^ 8 ^ 9 .. "x" .. "y"
    local bits = 1 & 2 | 3 ~ 4 << 5 >> 6, ~7, -8, not true, #"len"
    local cmp = (1 < 2) == (2 > 1) and 1 <= 2 or 2 >= 1 and 1 ~= 2
    print "string call"; print { "table call" }
    t:m(1); (print)("paren call")
    local f = t.f("s"):upper():lower()
    return fact(5), ops, bits, cmp, f, long, h, s1, s2
    """#

    func testEveryConstructParses() throws {
        let chunk = try LuaParser.parse(Self.everyConstruct)
        XCTAssertEqual(chunk.block.statements.count, 25)
        guard case .return(let values, let position) = chunk.block.statements.last else { return XCTFail("no return last") }
        XCTAssertEqual(values.count, 9)
        XCTAssertEqual(position, SourcePosition(line: 28, column: 1))
    }

    func testTokensCarryLinesAndByteColumns() throws {
        let tokens = try LuaLexer.tokens(of: "local x = [[\nab]] -- c\n  y.z = 'q'\n--[[\n]] w")
        let positions = tokens.map { "\($0.position)" }
        XCTAssertEqual(positions, ["1:1", "1:7", "1:9", "1:11", "3:3", "3:4", "3:5", "3:7", "3:9", "5:4", "5:5"])
        XCTAssertEqual(tokens[3].kind, .string("ab"))
        XCTAssertEqual(tokens[8].kind, .string("q"))
    }

    func testStringEscapesAreDecoded() throws {
        let tokens = try LuaLexer.tokens(of: #""a\tb\65\x42\u{263A}\z   c\"" '\''"#)
        XCTAssertEqual(tokens[0].kind, .string("a\tbAB\u{263A}c\""))
        XCTAssertEqual(tokens[1].kind, .string("'"))
    }

    func testOperatorPrecedenceFollowsLua() throws {
        // 1 + 2 * 3 ^ 2 ^ 1 .. "x": `..` is lowest and right-associative, `^` right-associative.
        let chunk = try LuaParser.parse("return 1 + 2 * 3 ^ 2 ^ 1 .. 'x' .. 'y'")
        guard case .return(let values, _) = chunk.block.statements[0],
              case .binary("..", let left, let right, _) = values[0] else { return XCTFail("not a concatenation") }
        guard case .binary("+", _, .binary("*", _, .binary("^", _, .binary("^", _, _, _), _), _), _) = left else {
            return XCTFail("arithmetic grouped wrongly: \(left)")
        }
        guard case .binary("..", .string("x", _), .string("y", _), _) = right else { return XCTFail("not right-associative") }
        guard case .return(let unary, _) = try LuaParser.parse("return -x ^ 2").block.statements[0],
              case .unary("-", .binary("^", _, _, _), _) = unary[0] else { return XCTFail("unary binds looser than ^") }
    }

    func testNotLuaIsReportedAtItsPosition() {
        XCTAssertThrowsError(try LuaParser.parse("local x = 1\nx + 1\n")) { error in
            XCTAssertEqual((error as? LuaSyntaxError)?.position, SourcePosition(line: 2, column: 1))
        }
        XCTAssertThrowsError(try LuaParser.parse("return 1\nprint(2)")) { error in
            XCTAssertEqual("\(error)", "2:1: '<eof>' or the end of the block expected near 'print'")
        }
        XCTAssertThrowsError(try LuaParser.parse("s = 'open\n'")) { error in
            XCTAssertEqual("\(error)", "1:5: unfinished string")
        }
    }

    /// Every Lua file of the repository (recipes, their modules and tests, examples,
    /// fixtures, benchmarks) and every Lua text the runtime ships (the prelude, the
    /// module wrappers) parses; the files Lua accepts are the parser's contract.
    func testEveryShippedLuaTextParses() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        var files: [URL] = []
        for folder in ["recipes", "Tests", "scripts", "docs"] {
            let enumerator = FileManager.default.enumerator(at: root.appendingPathComponent(folder), includingPropertiesForKeys: nil)
            while let url = enumerator?.nextObject() as? URL {
                if url.pathExtension == "lua" { files.append(url) }
            }
        }
        XCTAssertGreaterThanOrEqual(files.count, 25)
        for file in files {
            let source = try String(contentsOf: file, encoding: .utf8)
            XCTAssertNoThrow(try LuaParser.parse(source), file.path)
        }
        var texts = [Prelude.source, Prelude.dataSource]
        texts += [JSONPlugin.make(), TimePlugin.make()].compactMap(\.luaWrapper)
        for text in texts { XCTAssertNoThrow(try LuaParser.parse(text)) }
    }
}
