import Foundation
import HubClient
import HubSandbox
import ScriptHost
import XCTest
@testable import HubBindings

/// Attacks on lazy modules (Prelude `base.__index` → `host.load_module` → the wrapper),
/// with the real `hub` module. Before lazy modules, every wrapper ran at install time,
/// before any recipe code, so nothing a recipe did could reach a module's build. Now
/// the build runs on the recipe's first read, and the hub wrapper calls `group:sub(1, 1)`
/// — `string.sub`, which the recipe can replace (`string` is a shared, writable table).
/// Each test asserts what held before; today each fails (see the comment on each).
final class AttackLazyHubModuleTests: XCTestCase {
    private func run(_ body: String, file: StaticString = #filePath, line: UInt = #line) throws
        -> (lines: [String], failure: String?) {
        let h = try GatingTests.Harness()
        let prepared = try h.recipe("attack.lua", WebhookBindingTests.recipe(needs: "users.list", body))
        let output = MemoryOutput()
        let outcome = try h.execute(prepared, try h.jobs, output: output)
        return (output.lines, outcome.failure?.message)
    }

    /// TODAY: prints "function\tfunction" — the recipe's `string.sub` decides which raw
    /// entries the wrapper publishes, so the internal `_next_page` / `_close_list`
    /// bindings become `hub._next_page` / `hub._close_list`.
    func testAttackAReplacedStringSubCannotPublishHubsInternalFunctions() throws {
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

    /// Was: "false\ttrue\tfalse" — a read of `hub` during hub's own build (from a replaced
    /// `string.sub`) built a second module. Now no recipe code runs during a build (the
    /// wrapper calls the library's own functions): the replacement is never called, and
    /// `hub` is one table.
    func testAttackAReadOfHubDuringItsOwnBuildIsTheSameTable() throws {
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

    /// Was: "false\ttrue" — the build yielded (a replaced `string.sub` yielded the coroutine
    /// that first read `hub`), the main thread read `hub` meanwhile (a second build), and
    /// resuming the coroutine overwrote the global. Now the build cannot yield: it ends in
    /// the first resume, and every read is the same table.
    func testAttackAHubBuildResumedAfterAnotherReadDoesNotReplaceTheModule() throws {
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

    /// TODAY: the run fails with "hub:63: attempt to call a nil value (method 'sub')" —
    /// an error at a line of hubscript's internal wrapper, caused by a recipe that
    /// cleared `string.sub` before its first read of `hub`.
    func testAttackAClearedStringSubDoesNotBreakTheFirstReadOfHub() throws {
        let r = try run("""
            string.sub = nil
            print(type(hub.users.list))
            """)
        XCTAssertNil(r.failure)
        XCTAssertEqual(r.lines, ["function"])
    }
}
