import Foundation
import HubClient
import HubSandbox
import ScriptHost
import XCTest

/// `501 not_implemented` (docs/modules.md, gated features) turns the feature off for the run, warns once and
/// never shows an error. The sandbox answers 501 for the switched-off routes.
final class FeatureOffTests: XCTestCase {
    func testA501TurnsTheFeatureOffWithOneWarningAndNoMoreCalls() throws {
        let h = try GatingTests.Harness(faults: try FaultSpec(parsing: "unimplemented=webhooks+users/me/notifications"))
        let warnings = Warnings()
        let connection = try h.connection(key: SandboxFixtures.jobsKeySecret, profile: "jobs", keyID: SandboxFixtures.jobsKeyId,
                                          warn: warnings.add)
        let prepared = try h.recipe("off.lua", WebhookBindingTests.recipe(needs: "webhooks.manage", """
            print("available", hub.available("webhooks"))
            local w = hub.webhooks.create { url = "http://127.0.0.1:9/hooks", events = { "*" } }
            print("create", tostring(w))
            print("list", hub.webhooks.list():count())
            print("get", tostring(hub.webhooks.get("whk_x")))
            print("update", tostring(hub.webhooks.update("whk_x", { description = "d" })))
            print("deliveries", #hub.webhooks.deliveries("whk_x"):collect())
            print("available", hub.available("webhooks"), hub.available("notifications"))
            print("inbox", hub.inbox.list():count(), hub.inbox.list{ category = "security." }:count())
            print("available", hub.available("notifications"))
            print("other features go on", hub.organizations.list():count() > 0)
            """))
        let output = MemoryOutput()
        let outcome = try h.execute(prepared, connection, output: output)
        XCTAssertNil(outcome.failure, outcome.failure?.message ?? "")
        XCTAssertEqual(output.lines, [
            "available\ttrue", "create\tnil", "list\t0", "get\tnil", "update\tnil", "deliveries\t0",
            "available\tfalse\ttrue", "inbox\t0\t0", "available\tfalse", "other features go on\ttrue",
        ])
        XCTAssertEqual(h.received(under: "/webhooks"), 1, "only the call that found out reaches the Hub")
        XCTAssertEqual(h.received(under: "/users/me/notifications"), 1)
        XCTAssertEqual(warnings.all, [
            "the Hub does not offer 'webhooks' (HTTP 501 not_implemented); calls to it are off for this run.",
            "the Hub does not offer 'notifications' (HTTP 501 not_implemented); calls to it are off for this run.",
        ])
        // The refused create is journalled as failed, not left pending for a resume.
        let writes = try h.journal.writes(runID: outcome.runID)
        XCTAssertEqual(writes.map(\.state), [.failed])
    }

    /// Whatever kind of call meets the 501 first (a read, a list, a write through the common
    /// path, a write that withholds a secret), it carries its binding's feature: the feature
    /// goes off, the call returns its "unavailable" result, and an ungated call made after
    /// it reaches the Hub as usual.
    func testTheFirstCallOfAnyKindTurnsItsFeatureOff() throws {
        let h = try GatingTests.Harness(faults: try FaultSpec(parsing: "unimplemented=webhooks"))
        for (first, shown) in [
            (#"hub.webhooks.get("whk_x")"#, "nil"),
            ("hub.webhooks.list():count()", "0"),
            (#"hub.webhooks.deliveries("whk_x"):count()"#, "0"),
            (#"hub.webhooks.update("whk_x", { description = "d" })"#, "nil"),
            (#"hub.webhooks.test("whk_x")"#, "nil"),
            (#"hub.webhooks.delete("whk_x")"#, "nil"),
            (#"hub.webhooks.create { url = "http://127.0.0.1:9/hooks", events = { "*" } }"#, "nil"),
        ] {
            let warnings = Warnings()
            let connection = try h.connection(key: SandboxFixtures.jobsKeySecret, profile: "jobs", keyID: SandboxFixtures.jobsKeyId,
                                              warn: warnings.add)
            let before = h.received(under: "/webhooks")
            let prepared = try h.recipe("first.lua", AdminBindingTests.recipe(needs: ["webhooks.manage", "users.list"], """
                print(tostring(\(first)), hub.available("webhooks"))
                print(tostring(hub.webhooks.get("whk_y")))
                print(hub.users.list():first() ~= nil)
                """))
            let output = MemoryOutput()
            let outcome = try h.execute(prepared, connection, output: output)
            XCTAssertNil(outcome.failure, "\(first): \(outcome.failure?.message ?? "")")
            // The ungated list after it carries no feature: it reads the users (an empty list otherwise).
            XCTAssertEqual(output.lines, ["\(shown)\tfalse", "nil", "true"], first)
            XCTAssertEqual(warnings.all, ["the Hub does not offer 'webhooks' (HTTP 501 not_implemented); calls to it are off for this run."], first)
            XCTAssertEqual(h.received(under: "/webhooks"), before + 1, "\(first): only the call that found out reaches the Hub")
        }
    }

    func testAFeatureOffStillChecksArguments() throws {
        let h = try GatingTests.Harness(faults: try FaultSpec(parsing: "unimplemented=webhooks"))
        let prepared = try h.recipe("off.lua", WebhookBindingTests.recipe(needs: "webhooks.manage", """
            print(hub.webhooks.list():count())
            hub.webhooks.get({})
            """))
        let output = MemoryOutput()
        let outcome = try h.execute(prepared, try h.jobs, output: output)
        XCTAssertEqual(output.lines, ["0"])
        XCTAssertEqual(outcome.failure?.message.contains("bad argument #1 to 'hub.webhooks.get'"), true, outcome.failure?.message ?? "")
    }

    func testHubAvailableRefusesHostileArguments() throws {
        let h = try GatingTests.Harness()
        for (argument, message) in [
            ("{}", "bad argument #1 to 'hub.available' (string expected, got table)"),
            ("nil", "bad argument #1 to 'hub.available' (string expected, got nil)"),
            ("string.rep('x', 1 << 20)", "bad argument #1 to 'hub.available' (feature is 1048576 bytes; the most is 64)"),
        ] {
            let prepared = try h.recipe("hostile.lua", WebhookBindingTests.recipe(needs: "users.list", "print(hub.available(\(argument)))"))
            let outcome = try h.execute(prepared, try h.jobs)
            XCTAssertEqual(outcome.failure?.message.contains(message), true, "\(argument): \(outcome.failure?.message ?? "no failure")")
        }
        // A name no feature has (NUL included) was never turned off.
        let prepared = try h.recipe("odd.lua", WebhookBindingTests.recipe(needs: "users.list", #"print(hub.available("web\0hooks"), hub.available(""))"#))
        let output = MemoryOutput()
        let outcome = try h.execute(prepared, try h.jobs, output: output)
        XCTAssertNil(outcome.failure, outcome.failure?.message ?? "")
        XCTAssertEqual(output.lines, ["true\ttrue"])
    }
}

private final class Warnings: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    var all: [String] { lock.withLock { items } }
    var add: @Sendable (String) -> Void { { text in self.lock.withLock { self.items.append(text) } } }
}
