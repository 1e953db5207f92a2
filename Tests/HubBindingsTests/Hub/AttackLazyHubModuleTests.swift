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

    /// TODAY: prints "false\ttrue\tfalse" — a read of `hub` during hub's own build (from
    /// a replaced `string.sub`) builds a second module, then the outer build replaces the
    /// global: the recipe holds two different `hub` tables.
    func testAttackAReadOfHubDuringItsOwnBuildIsTheSameTable() throws {
        let r = try run("""
            local real = string.sub
            local building, inner = false, nil
            string.sub = function(s, ...)
              if not building then building = true; inner = hub end
              return real(s, ...)
            end
            local outer = hub
            string.sub = real
            print(inner == outer, hub == outer, hub == inner)
            """)
        XCTAssertNil(r.failure)
        XCTAssertEqual(r.lines, ["true\ttrue\ttrue"])
    }

    /// TODAY: prints "false\ttrue" — the build yields (a replaced `string.sub` yields the
    /// coroutine that first read `hub`), the main thread reads `hub` meanwhile (a second
    /// build), and resuming the coroutine finishes the first build and overwrites the
    /// global: `hub` is not the table it was a moment ago.
    func testAttackAHubBuildResumedAfterAnotherReadDoesNotReplaceTheModule() throws {
        let r = try run("""
            local real = string.sub
            string.sub = function(s, ...) coroutine.yield() return real(s, ...) end
            local co = coroutine.create(function() return hub end)
            coroutine.resume(co)
            string.sub = real
            local first = hub
            local resumed, from_co
            while coroutine.status(co) ~= "dead" do resumed, from_co = coroutine.resume(co) end
            print(first == hub, resumed and from_co == hub)
            """)
        XCTAssertNil(r.failure)
        XCTAssertEqual(r.lines, ["true\ttrue"])
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
