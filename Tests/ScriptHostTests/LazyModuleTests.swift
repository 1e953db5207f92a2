import XCTest
import ScriptHost

/// Modules are built on a recipe's first read of their global (scripts/bench-runtime,
/// start-up): the same module as before, once, inside the run's limits.
final class LazyModuleTests: RecipeTestCase {
    /// A plugin whose wrapper counts its own runs through a Swift function.
    private func countingPlugin(_ name: String, wrapperRuns: Counter) -> Plugin {
        Plugin(module: name, functions: [ScriptFunction("built") { _ in
            wrapperRuns.add()
            return .none
        }], values: ["answer": 42], luaWrapper: """
            local raw = ...
            raw.built()
            return { answer = raw.answer }
            """)
    }

    func testAModuleNoRecipeReadsIsNeverBuilt() {
        let runs = Counter()
        harness.plugins.append(countingPlugin("lazy", wrapperRuns: runs))
        XCTAssertEqual(lines("print('hello')"), ["hello"])
        XCTAssertEqual(runs.value, 0)
    }

    func testAModuleIsBuiltOnceAndIsTheSameTableOnEveryRead() {
        let runs = Counter()
        harness.plugins.append(countingPlugin("lazy", wrapperRuns: runs))
        XCTAssertEqual(lines("""
            local a = lazy
            local function f() return lazy end
            print(a.answer, a == lazy, f() == a, require == require)
            """), ["42\ttrue\ttrue\ttrue"])
        XCTAssertEqual(runs.value, 1)
    }

    func testAModuleReadFirstInsideAModuleOrACoroutineIsTheSameModule() throws {
        let runs = Counter()
        harness.plugins.append(countingPlugin("lazy", wrapperRuns: runs))
        try harness.write("m.lua", "return lazy")
        XCTAssertEqual(lines("""
            local co = coroutine.wrap(function() coroutine.yield(lazy) end)
            local from_co = co()
            print(require("m") == from_co, from_co.answer)
            """), ["true\t42"])
        XCTAssertEqual(runs.value, 1)
    }

    func testAWrapperThatFailsFailsTheReadThatBuildsItAndIsTriedAgain() {
        harness.plugins.append(Plugin(module: "broken", luaWrapper: "error('the wrapper broke', 0)"))
        XCTAssertEqual(lines("""
            print(pcall(function() return broken end))
            print(pcall(function() return broken end))
            print(json.encode({still = "works"}))
            """), ["false\tthe wrapper broke", "false\tthe wrapper broke", #"{"still":"works"}"#])
    }

    func testBuildingAModuleCountsAgainstTheRunsInstructionLimit() {
        // A wrapper that loops: its instructions are the recipe's (it caused the build).
        harness.limits.instructions = 200_000
        harness.plugins.append(Plugin(module: "slow", luaWrapper: "local n = 0 while true do n = n + 1 end"))
        assertFails("local s = slow", kind: .limit(.instructions),
                    message: "limit exceeded: instructions (200000); raise limits.instructions in the recipe manifest if the work is expected")
        assertFreshRunWorks()
    }

    func testAModuleCannotBeAssignedBeforeOrAfterItIsBuilt() {
        harness.plugins.append(countingPlugin("lazy", wrapperRuns: Counter()))
        assertFails("lazy = 1", kind: .runtime,
                    message: "recipes/t.lua:1: recipe attempted to assign to undeclared global 'lazy' (declare it with 'local')")
        assertFails("local _ = lazy.answer lazy = 1", kind: .runtime,
                    message: "recipes/t.lua:1: recipe attempted to assign to undeclared global 'lazy' (declare it with 'local')")
    }

    func testAModuleInstalledTwiceIsTheLastOne() {
        // A run's extra plugins may replace a default module of the same name.
        harness.plugins.append(Plugin(module: "twice", values: ["which": "first"]))
        harness.plugins.append(Plugin(module: "twice", values: ["which": "second"]))
        XCTAssertEqual(lines("print(twice.which)"), ["second"])
    }

    func testAnUnknownGlobalIsStillAnError() {
        harness.plugins.append(countingPlugin("lazy", wrapperRuns: Counter()))
        assertFails("local x = lazyy", kind: .runtime,
                    message: "recipes/t.lua:1: recipe attempted to access nonexistent global 'lazyy'")
    }

    /// A plugin made with `makingFunctions:` makes them on the module's first read,
    /// once, and never for a run that does not read it.
    func testAPluginsFunctionsAreMadeOnTheModulesFirstReadOnly() {
        let made = Counter()
        func plugin() -> Plugin {
            Plugin(module: "late", makingFunctions: {
                made.add()
                return [ScriptFunction("twice") { call in .value(.integer(try call.integer(1) * 2)) }]
            })
        }
        harness.plugins.append(plugin())
        XCTAssertEqual(lines("print('no module read')"), ["no module read"])
        XCTAssertEqual(made.value, 0)
        harness.plugins = [plugin()]
        XCTAssertEqual(lines("print(late.twice(21), late.twice(2))"), ["42\t4"])
        XCTAssertEqual(made.value, 1)
    }

    /// A function registered on its module's first read still names itself
    /// `module.function` in errors.
    func testAFunctionOfALazyModuleIsNamedWithItsModuleInErrors() {
        harness.plugins.append(Plugin(module: "late", makingFunctions: {
            [ScriptFunction("nested.twice") { call in .value(.integer(try call.integer(1) * 2)) }]
        }))
        assertFails("late.nested.twice('x')", kind: .runtime,
                    message: "recipes/t.lua:1: bad argument #1 to 'late.nested.twice' (number expected, got string)")
    }
}

/// A thread-safe counter for Swift functions called from Lua.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
