import XCTest
@testable import ScriptHost

/// `RunConfiguration.leavesLuaStateToExit`: the one-shot CLI leaves the run's Lua state
/// to the process's exit instead of closing it (freeing everything, running the last
/// finalizers) — the run itself is the same.
final class StateLeftToExitTests: RecipeTestCase {
    func testTheStateIsClosedOnlyWhenNotLeftToTheExit() throws {
        #if !DEBUG
        throw XCTSkip("the count of closed states is kept by debug builds only")
        #else
        let source = """
            local t = setmetatable({}, { __gc = function() end })
            local big = {}
            for i = 1, 10000 do big[i] = { i } end
            print(#big)
            """
        let before = LuaVM.statesClosed
        XCTAssertEqual(lines(source), ["10000"])
        XCTAssertEqual(LuaVM.statesClosed, before + 1)
        harness.leavesLuaStateToExit = true
        XCTAssertEqual(lines(source), ["10000"])
        XCTAssertEqual(LuaVM.statesClosed, before + 1, "the state was closed")
        // A failing run's report is unchanged.
        let outcome = harness.run("error('boom')")
        XCTAssertEqual(outcome.message, "recipes/t.lua:1: boom")
        XCTAssertEqual(LuaVM.statesClosed, before + 1)
        harness.leavesLuaStateToExit = false
        assertFreshRunWorks()
        XCTAssertEqual(LuaVM.statesClosed, before + 2)
        #endif
    }
}
