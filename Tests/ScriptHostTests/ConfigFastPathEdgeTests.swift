import XCTest
@testable import ScriptHost

/// Configuration-shaped chunks at the edges of the literal fast path: each reads (or
/// fails) exactly as Lua reads it (`LuaDataFile.evaluate` vs `evaluateInLua`).
final class ConfigFastPathEdgeTests: XCTestCase {
    static let sources: [String] = [
        "return { a = \"x\0y\" }", "return { a = 'x' }\0", "\0return {}", "return {}\r\n", "return {}\r",
        "return {\r\n a = 1,\r\n}\r\n-- end", "return {} -- no newline at the end", "return {}--", "return {}--[[x]]",
        "return { a = 'x\\z\n   y' }", "return { a = [[long]] }", "return { a = '\\u{10FFFF}' }", "return { a = '\\xff' }",
        "return { a = '\\255\\0' }", "\u{0B}\u{0C}return\u{0B}{\u{0C}a\u{0B}=\u{0C}1\u{0B}}\u{0C}", "return{a=1}", "return {a=1};",
        "return { [1] = 'a', [2] = 'b' }", "return { 'a', [3] = 'c' }", "return { [1.0] = 'x' }", "return { [0x10] = 1 }",
        "return { a = 9223372036854775807, b = 9223372036854775808, c = -9223372036854775808 }",
        "return { a = 0x7fffffffffffffff, b = 0xffffffffffffffff, c = 0x1p4, d = 1e309, e = .5, f = 5. }",
        "return { a = nil }", "return { nil }", "return { 1, nil, 3 }", "return { a = 'é', ['é'] = 1 }",
        "return { profiles = { default = { url = 'https://hub.example', token_env = 'T' } }, journal = { postgres = 'x' } }",
        "return {}\nreturn {}", "return { a = - 1 }", "return { a = --[[c]] 1 }", "return { a = -0x8000000000000000 }",
        "return { ['a\\0b'] = 1 }", "return { a = \"\\\"\" }", "return { [true] = 1 }", "return { a = { { {} } } }",
    ]

    func testEachReadsAsLuaReadsIt() {
        for source in Self.sources {
            let fast = Result { try LuaDataFile.evaluate(source: source, displayPath: "c.lua") }
            let slow = Result { try LuaDataFile.evaluateInLua(source: source, displayPath: "c.lua") }
            switch (fast, slow) {
            case (.success(let a), .success(let b)):
                XCTAssertEqual(exactDescription(a), exactDescription(b), source.debugDescription)
            case (.failure(let a), .failure(let b)):
                XCTAssertEqual("\(a)", "\(b)", source.debugDescription)
            default:
                XCTFail("\(source.debugDescription): fast \(fast), Lua \(slow)")
            }
        }
    }
}
