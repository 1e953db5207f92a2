import Foundation
import HubClient
import HubSandbox
import ScriptHost
import XCTest

/// Lazy modules (Prelude `base.__index` → `host.load_module` → the wrapper) with the real
/// `hub` module: the build runs on the recipe's first read, after recipe code that may
/// have replaced shared library functions such as `string.sub` (`string` is a shared,
/// writable table). Nothing a recipe does may reach a module's build.
final class LazyHubModuleIsolationTests: XCTestCase {
    private func run(_ body: String, file: StaticString = #filePath, line: UInt = #line) throws
        -> (lines: [String], failure: String?) {
        let h = try GatingTests.Harness()
        let prepared = try h.recipe("attack.lua", WebhookBindingTests.recipe(needs: "users.list", body))
        let output = MemoryOutput()
        let outcome = try h.execute(prepared, try h.jobs, output: output)
        return (output.lines, outcome.failure?.message)
    }

    /// A wrapper that used the recipe's `string.sub` to pick which raw entries to publish
    /// would expose the internal `_next_page` / `_close_list` bindings as
    /// `hub._next_page` / `hub._close_list` ("function\tfunction").
    func testAReplacedStringSubCannotPublishHubsInternalFunctions() throws {
        let r = try run("""
            local real = string.sub
            string.sub = function(s, i, j)
              if s == "_next_page" or s == "_close_list" then return "x" end
              return real(s, i, j)
            end
            print(type(hub._next_page), type(hub._close_list))
            """)
        XCTAssertNil(r.failure)
        XCTAssertEqual(r.lines, ["nil\tnil"])
    }

    /// A read of `hub` during hub's own build (from a replaced `string.sub`) would build a
    /// second module ("false\ttrue\tfalse"). No recipe code runs during a build (the
    /// wrapper calls the library's own functions): the replacement is never called, and
    /// `hub` is one table.
    func testAReadOfHubDuringItsOwnBuildIsTheSameTable() throws {
        let r = try run("""
            local real = string.sub
            local calls, inner = 0, nil
            string.sub = function(s, ...)
              calls = calls + 1
              if inner == nil then inner = hub end
              return real(s, ...)
            end
            local outer = hub
            string.sub = real
            print(calls, inner == nil, hub == outer)
            """)
        XCTAssertNil(r.failure)
        XCTAssertEqual(r.lines, ["0\ttrue\ttrue"])
    }

    /// A build that could yield (a replaced `string.sub` yielding the coroutine that first
    /// read `hub`) would let the main thread read `hub` meanwhile (a second build), and
    /// resuming the coroutine would overwrite the global ("false\ttrue"). The build cannot
    /// yield: it ends in the first resume, and every read is the same table.
    func testAHubBuildResumedAfterAnotherReadDoesNotReplaceTheModule() throws {
        let r = try run("""
            local real = string.sub
            string.sub = function(s, ...) coroutine.yield() return real(s, ...) end
            local co = coroutine.create(function() return hub end)
            local resumed, from_co = coroutine.resume(co)
            string.sub = real
            print(coroutine.status(co), resumed and from_co == hub, hub == hub)
            """)
        XCTAssertNil(r.failure)
        XCTAssertEqual(r.lines, ["dead\ttrue\ttrue"])
    }

    /// A recipe that cleared `string.sub` before its first read of `hub` must not fail
    /// with an error at a line of hubscript's internal wrapper ("attempt to call a nil
    /// value (method 'sub')").
    func testAClearedStringSubDoesNotBreakTheFirstReadOfHub() throws {
        let r = try run("""
            string.sub = nil
            print(type(hub.users.list))
            """)
        XCTAssertNil(r.failure)
        XCTAssertEqual(r.lines, ["function"])
    }
}
