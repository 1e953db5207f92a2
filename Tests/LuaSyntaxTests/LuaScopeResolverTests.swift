import XCTest
@testable import LuaSyntax

final class LuaScopeResolverTests: XCTestCase {
    private func globals(_ source: String) throws -> [String] {
        try LuaScopeResolver.resolve(LuaParser.parse(source)).globals.map { access in
            let path = ([access.root.name] + access.fields.map(\.name)).joined(separator: ".")
            switch access.use {
            case .read: return "read \(path)@\(access.root.position)"
            case .write: return "write \(path)@\(access.root.position)"
            case .fieldWrite: return "set \(path)@\(access.root.position)"
            case .call(let n, let open): return "call \(path)/\(n)\(open ? "+" : "")@\(access.root.position)"
            }
        }
    }

    func testLocalsHideGlobalsOnlyWhereLuaSeesThem() throws {
        // `local x = x` reads the global x; the local is visible from the next statement.
        XCTAssertEqual(try globals("local x = x\nprint(x)"), ["read x@1:11", "call print/1@2:1", "read x@2:7"])
        // (the use of the local x goes on the list as a use of the global it aliases, after the others)
        // A local function sees itself; a plain local function value does not.
        XCTAssertEqual(try globals("local function f() return f() end\nlocal g = function() return g end"), ["read g@2:29"])
        // A repeat block's locals are visible in its until condition, not after.
        XCTAssertEqual(try globals("repeat local r = 1 until r\nreturn r"), ["read r@2:8"])
        // Loop variables and parameters are visible in their bodies only.
        XCTAssertEqual(try globals("for i = 1, 2 do local _ = i end\nfor k, v in next, {} do local _ = k .. v end\nreturn i, k"),
                       ["read next@2:13", "read i@3:8", "read k@3:11"])
        XCTAssertEqual(try globals("local function f(a, ...) return a, ... end\nreturn a"), ["read a@2:8"])
        // A method has `self`; an upvalue is a local of the enclosing function.
        XCTAssertEqual(try globals("local t = {}\nfunction t:m() return self end\nlocal u = 1\nreturn function() return u end"), [])
        // Scopes end with their block.
        XCTAssertEqual(try globals("do local d = 1 end\nif true then local e = 1 else local e2 = 2 end\nreturn d, e, e2"),
                       ["read d@3:8", "read e@3:11", "read e2@3:14"])
    }

    func testPathsUsesAndAttributes() throws {
        XCTAssertEqual(try globals("hub.users.list{ status = 'x' }"), ["call hub.users.list/1@1:1"])
        XCTAssertEqual(try globals("local n = params['days'] + params.extra"), ["read params.days@1:11", "read params.extra@1:28"])
        XCTAssertEqual(try globals("count = 0\nhub.x.y = 1"), ["write count@1:1", "set hub.x.y@2:1"])
        XCTAssertEqual(try globals("string.format('%d', f())"), ["call string.format/2+@1:1", "call f/0@1:21"])
        XCTAssertEqual(try globals("function helper() end"), ["write helper@1:10"])
        XCTAssertEqual(try globals("local k <const> = 1\nlocal c <close> = nil\nreturn k"), [])
        // A dynamic index ends the static path; its key is still walked.
        let report = LuaScopeResolver.resolve(try LuaParser.parse("return params[key]"))
        XCTAssertEqual(report.globals.map(\.root.name), ["key", "params"])
        XCTAssertEqual(report.globals.last?.isDynamic, true)
    }

    func testGotoLabelsAndLocalEnvironment() throws {
        XCTAssertEqual(try globals("goto done\n::done::\nlocal _ENV = { print = print }\nprint(1)"), ["read print@3:24"])
    }

    func testUnusedLocals() throws {
        let report = LuaScopeResolver.resolve(try LuaParser.parse("""
        local used, unused = 1, 2
        local _ignored = 3
        local function helper() end
        local assigned = 1
        assigned = 2
        for i = 1, 2 do end
        local c <close> = nil
        return used
        """))
        XCTAssertEqual(report.unusedLocals.map { "\($0.name)@\($0.position)" }, ["unused@1:13", "helper@3:16", "assigned@4:7"])
    }
}
