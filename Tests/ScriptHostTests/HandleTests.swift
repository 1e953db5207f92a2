import XCTest
@testable import ScriptHost

/// Opaque handles (`ScriptHandle`): a recipe can hold and pass them, never read them.
/// Each rule has its own test asserting the exact error.
final class HandleTests: RecipeTestCase {
    /// `t.secret(name)` returns one handle per name; `t.name(h)` says which handle a
    /// binding received (or what else it got).
    static func plugin() -> Plugin {
        let cache = ScriptHandleCache(kind: "secret")
        return Plugin(module: "t", functions: [
            ScriptFunction("secret") { call in .value(.handle(cache.handle(try call.string(1)))) },
            ScriptFunction("name") { call in
                switch try call.value(1) {
                case .handle(let h): return .value(.string("handle:" + h.name))
                case let other: return .value(.string("not a handle: " + other.luaTypeName))
                }
            },
            ScriptFunction("nested") { _ in .value(.object(["token": .handle(cache.handle("n"))])) },
        ])
    }

    override func setUp() {
        super.setUp()
        harness.plugins.append(Self.plugin())
    }

    func misuse(_ what: String) -> String {
        "recipes/t.lua:1: <secret ci> is an opaque handle: it cannot be \(what); pass it only to a binding that takes it"
    }

    func testToStringShowsTheLabelAndBindingsGetTheHandleBack() {
        XCTAssertEqual(lines("""
            local h = t.secret("dispatch/ci")
            print(tostring(h), type(h), t.name(h), t.name({}), t.name(t.nested().token))
            local box = { token = h }
            print(t.name(box.token), rawequal(h, t.secret("dispatch/ci")), h == h)   -- each push is a new userdata
            """), ["<secret dispatch/ci>\tuserdata\thandle:dispatch/ci\tnot a handle: table\thandle:n",
                   "handle:dispatch/ci\tfalse\ttrue"])
    }

    func testConcatenationIsRefused() {
        assertFails(#"local h = t.secret("ci") return "Bearer " .. h"#, kind: .runtime, message: misuse("concatenated (..)"))
    }

    func testLengthIsRefused() {
        assertFails(#"local h = t.secret("ci") return #h"#, kind: .runtime, message: misuse("measured (#)"))
    }

    func testComparisonIsRefused() {
        assertFails(#"local h = t.secret("ci") return h == t.secret("other")"#, kind: .runtime, message: misuse("compared (==)"))
        assertFails(#"local h = t.secret("ci") return h < h"#, kind: .runtime, message: misuse("compared (<)"))
    }

    func testIndexingAndAssigningAreRefused() {
        assertFails(#"local h = t.secret("ci") return h.value"#, kind: .runtime, message: misuse("indexed"))
        assertFails(#"local h = t.secret("ci") h.value = 1"#, kind: .runtime, message: misuse("assigned to"))
        assertFails(#"local h = t.secret("ci") return h:reveal()"#, kind: .runtime, message: misuse("indexed"))
    }

    func testArithmeticAndCallsAreRefused() {
        assertFails(#"local h = t.secret("ci") return h + 1"#, kind: .runtime, message: misuse("used in arithmetic"))
        assertFails(#"local h = t.secret("ci") return h()"#, kind: .runtime, message: misuse("called"))
    }

    func testStringFormatIsRefused() {
        assertFails(#"local h = t.secret("ci") return string.format("%s", h)"#, kind: .runtime,
                    message: "recipes/t.lua:1: string.format: argument 1 is <secret ci>, an opaque handle with no text; pass it only to a binding that takes it")
    }

    func testJSONEncodingIsRefused() {
        assertFails(#"local h = t.secret("ci") return json.encode({ token = h })"#, kind: .runtime,
                    message: "recipes/t.lua:1: json.encode: cannot encode <secret ci>: an opaque handle has no value to encode")
    }

    func testTheMetatableIsHiddenAndCannotBeReplaced() {
        XCTAssertEqual(lines(#"local h = t.secret("ci") print(getmetatable(h))"#), ["false"])
        assertFails(#"local h = t.secret("ci") return setmetatable(h, {})"#, kind: .runtime,
                    message: "recipes/t.lua:1: bad argument #1 to 'setmetatable' (table expected, got handle)")
    }

    func testToBeClosedIsRefused() {
        assertFails(#"local h <close> = t.secret("ci")"#, kind: .runtime, message: misuse("closed"))
    }

    func testAForgedLookalikeIsNotAHandle() {
        // A table with a __tostring that imitates a handle reaches bindings as a table.
        XCTAssertEqual(lines("""
            local fake = setmetatable({}, { __tostring = function() return "<secret ci>" end })
            print(tostring(fake), t.name(fake))
            """), ["<secret ci>\tnot a handle: table"])
    }

    func testAnErrorRaisedWithAHandleShowsNoValue() {
        let outcome = harness.run(#"error(t.secret("ci"))"#)
        XCTAssertEqual(outcome.message, "(error object is a userdata value)")
    }

    func testHandlesSurviveGarbageCollectionAndManyPushes() {
        XCTAssertEqual(lines("""
            local names = {}
            for i = 1, 20000 do
              local h = t.secret("s" .. (i % 50))
              if i % 1000 == 0 then local junk = {} for k = 1, 1000 do junk[k] = {} end end
              names[t.name(h)] = true
            end
            local n = 0 for _ in pairs(names) do n = n + 1 end
            print(n)
            """), ["50"])
    }
}
