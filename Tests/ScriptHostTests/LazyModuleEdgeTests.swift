import XCTest
import ScriptHost

/// Lazy modules that need no Hub (see also RecipeModulesTests'
/// LazyHubModuleIsolationTests).
final class LazyModuleEdgeTests: RecipeTestCase {
    /// A plugin named like a built-in global (`os` here) is what the recipe sees: the lazy
    /// path (`base.__index`) never runs for a name `base` already holds, so a plugin only
    /// marked lazy would be registered but unreachable, silently (`os.answer` nil).
    func testAPluginNamedLikeABuiltInGlobalIsWhatTheRecipeSees() {
        harness.plugins.append(Plugin(module: "os", values: ["answer": 42]))
        XCTAssertEqual(lines("print(os.answer)"), ["42"])
    }
}

/// Lazy registration reached through other paths: values handed out early, gates, failed builds.
final class LazyRegistrationPathTests: RecipeTestCase {
    /// A function of module `b` that module `a` hands out as a value before `b` is read:
    /// when every module's functions were registered at install, errors named it `b.twice`;
    /// since they are registered on the module's first read they named it `twice`.
    func testAFunctionHandedOutBeforeItsModuleIsReadIsNamedWithItsModule() {
        let twice = ScriptFunction("twice") { call in .value(.integer(try call.integer(1) * 2)) }
        harness.plugins.append(Plugin(module: "a", functions: [ScriptFunction("get") { _ in .value(.function(twice)) }]))
        harness.plugins.append(Plugin(module: "b", functions: [twice]))
        XCTAssertEqual(lines("""
            local f = a.get()
            print(pcall(f, "x"))
            print(pcall(b.twice, "y"))
            """), [
                "false\tbad argument #1 to 'b.twice' (number expected, got string)",
                "false\tbad argument #1 to 'b.twice' (number expected, got string)",
            ])
    }

    /// A gated function registered on its module's first read is still gated, on every
    /// path to it, and a build whose wrapper failed once registers nothing twice.
    func testALazyGatedFunctionIsGatedAfterAFailedBuild() {
        let builds = Counter()
        harness.gate = { function in throw ScriptMessageError("refused \(function.name)") }
        harness.plugins.append(Plugin(module: "g", functions: [
            ScriptFunction("del", writes: true) { _ in .value(.integer(1)) },
            ScriptFunction("count") { _ in builds.add(); return .value(.integer(Int64(builds.value))) },
        ], luaWrapper: """
            local raw = ...
            if raw.count() == 1 then error("first build fails", 0) end
            return { del = raw.del, again = raw.del, count = raw.count }
            """))
        XCTAssertEqual(lines("""
            print(pcall(function() return g end))
            print(pcall(g.del)) print(pcall(g.again)) print(g.count())
            """), ["false\tfirst build fails", "false\trefused del", "false\trefused del", "3"])
    }
}
