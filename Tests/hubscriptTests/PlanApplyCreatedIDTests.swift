import Foundation
import XCTest

/// docs/design.md "Plan and apply", a plan that creates something and then uses its id:
/// `hubscript plan --out` of recipes/onboard.lua for a new person names the user
/// `usr_planned_1` in the later writes, and `hubscript apply` sends every planned write
/// once, for the user it created — also when the apply is killed after the create and
/// finished with `hubscript runs resume`.
final class PlanApplyCreatedIDTests: XCTestCase {
    static let onboard = CLIHarness.repoRoot.appendingPathComponent("recipes/onboard.lua").path
    static let params = ["--param", "email=grace@example.com", "--param", "roles=role_support", "--param", "apps=app_wiki,app_crm"]

    /// The plan file as JSON, its run id and its writes.
    /// A fresh sandbox served with 150 ms of latency per request (time for a kill to land
    /// on a write in flight), a reader of it, and the options that point a run at it.
    func servedWithLatency() throws -> (CLIHarness, ServedSandbox, SandboxReader, [String]) {
        let cli = try CLIHarness(testCase: self)
        let hubState = cli.root.appendingPathComponent("hub-state")
        try cli.resetSandbox(state: hubState)
        let server = try ServedSandbox(cli, state: hubState, faults: "latency=150ms")
        return (cli, server, try SandboxReader(served: server.url), ["--config", server.config, "--profile", "served"])
    }

    func loadPlan(_ cli: CLIHarness, _ name: String) throws -> (runID: String, writes: [[String: Any]]) {
        let data = try Data(contentsOf: cli.root.appendingPathComponent(name))
        let plan = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        return (try XCTUnwrap(plan.string("run_id")), try XCTUnwrap(plan["writes"] as? [[String: Any]]))
    }

    /// The journalled writes of run `id` (`runs show --json`).
    func journalled(_ cli: CLIHarness, _ id: String) throws -> [[String: Any]] {
        let shown = try cli.run(["runs", "show", id, "--json"], expect: 0)
        let run = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any])
        return try XCTUnwrap(run["writes_journalled"] as? [[String: Any]])
    }

    /// Grace as the Hub holds her: her id, roles, live applications and the audit
    /// actions about her (sorted, with repeats); fails unless there is exactly one Grace.
    func grace(_ reader: SandboxReader) throws -> (id: String, roles: [String], apps: [String], audit: [String]) {
        let users = try reader.all("/users", "email=grace%40example.com")
        XCTAssertEqual(users.count, 1, "\(users)")
        let id = try XCTUnwrap(users.first?.string("id"))
        let roles = try reader.all("/users/\(id)/roles").compactMap { $0.string("role_id") }.sorted()
        let apps = try reader.all("/users/\(id)/entitlements").filter { $0.string("status") == "active" }
            .compactMap { $0.string("application_id") }.sorted()
        let audit = try reader.all("/audit-events", "target_user_id=\(id)").compactMap { $0.string("action") }.sorted()
        return (id, roles, apps, audit)
    }

    func testAPlanThatCreatesAUserAndUsesItsIDAppliesInFull() throws {
        let cli = try CLIHarness(testCase: self)
        let plan = try cli.run(["plan", Self.onboard] + Self.params + ["--out", "plan.json"], expect: 0)
        XCTAssertTrue(plan.stderr.contains("plan saved to plan.json: 4 writes; apply it with hubscript apply plan.json"), plan.output)
        let (runID, writes) = try loadPlan(cli, "plan.json")
        XCTAssertEqual(writes.compactMap { $0.string("path") }, [
            "/users", "/users/usr_planned_1/roles/role_support", "/users/usr_planned_1/entitlements",
            "/users/usr_planned_1/entitlements",
        ])
        XCTAssertEqual(writes.map { ($0["creates"] as? [String: Any])?.string("placeholder") ?? "-" },
                       ["usr_planned_1", "-", "ent_planned_1", "ent_planned_2"])
        XCTAssertEqual(try cli.sandbox().all("/users", "email=grace%40example.com").count, 0, "plan must not create anyone")

        let apply = try cli.run(["apply", "plan.json"], expect: 0)
        XCTAssertFalse(apply.stderr.contains("warning"), apply.output)
        XCTAssertFalse(apply.output.contains("differs from the plan"), apply.output)
        let hub = try grace(try cli.sandbox())
        XCTAssertTrue(apply.stdout.contains("grace@example.com (\(hub.id)): created (invited), roles +1, apps +2"), apply.output)
        XCTAssertEqual(hub.roles, ["role_member", "role_support"])
        XCTAssertEqual(hub.apps, ["app_crm", "app_wiki"])
        XCTAssertEqual(hub.audit.filter { $0 == "user.created" }.count, 1, "\(hub.audit)")
        XCTAssertEqual(hub.audit.filter { $0 == "role.assigned" }.count, 1, "\(hub.audit)")
        XCTAssertEqual(hub.audit.filter { $0 == "entitlement.granted" }.count, 2, "\(hub.audit)")

        // Every planned write was sent once, in order, for the user the apply created.
        let sent = try journalled(cli, runID)
        XCTAssertEqual(sent.compactMap { $0.string("path") }, [
            "/users", "/users/\(hub.id)/roles/role_support", "/users/\(hub.id)/entitlements", "/users/\(hub.id)/entitlements",
        ])
        XCTAssertEqual(sent.compactMap { $0.string("state") }, ["done", "done", "done", "done"])
        XCTAssertEqual(sent.compactMap { $0["attempts"] as? Int }, [1, 1, 1, 1])
        XCTAssertEqual(sent.first?.string("key"), writes.first?.string("key"))

        // The journal knows the plan is applied, though three keys were derived from the real id.
        let again = try cli.run(["apply", "plan.json"], expect: 0)
        XCTAssertTrue(again.stderr.contains("apply: this plan was already applied in full (run \(runID), 4 writes"), again.output)
        XCTAssertEqual(try grace(try cli.sandbox()).audit, hub.audit)
    }

    /// `kill -9` of the apply while a write after the create is in flight, then
    /// `hubscript runs resume`: Grace is created once and gets her role and apps. (The
    /// resumed pass is served the reads the apply made, so it decides as the apply did
    /// and reports what an apply that never stopped reports: it replays the create and
    /// the writes done, and resends the one in flight at the kill under its key, which
    /// the Hub replays.)
    func testAnApplyOfOnboardKilledAfterTheCreateIsResumedWithoutASecondUser() throws {
        let (cli, server, reader, extra) = try servedWithLatency()
        defer { server.stop() }
        try cli.run(["plan", Self.onboard] + Self.params + ["--out", "plan.json"] + extra, expect: 0)
        let (runID, writes) = try loadPlan(cli, "plan.json")
        XCTAssertEqual(writes.count, 4)

        let states = try cli.killOnPending(["apply", "plan.json"] + extra, runID: runID, atDone: 1)
        // Killed after the create and before the last write that uses the new id.
        XCTAssertTrue((1...3).contains(states["done", default: 0]), "\(states)")
        XCTAssertEqual(states["pending"], 1, "\(states)")
        XCTAssertEqual(try reader.all("/users", "email=grace%40example.com").count, 1)

        let resumed = try cli.run(["runs", "resume", runID] + extra, expect: 0)
        let hub = try grace(reader)
        XCTAssertTrue(resumed.stdout.contains("grace@example.com (\(hub.id)): created (invited), roles +1, apps +2"), resumed.output)
        XCTAssertEqual(hub.roles, ["role_member", "role_support"])
        XCTAssertEqual(hub.apps, ["app_crm", "app_wiki"])
        XCTAssertEqual(hub.audit.filter { $0 == "user.created" }.count, 1, "\(hub.audit)")
        XCTAssertEqual(hub.audit.filter { $0 == "role.assigned" }.count, 1, "\(hub.audit)")
        XCTAssertEqual(hub.audit.filter { $0 == "entitlement.granted" }.count, 2, "\(hub.audit)")
        let sent = try journalled(cli, runID)
        XCTAssertEqual(sent.compactMap { $0.string("state") }, ["done", "done", "done", "done"])
        XCTAssertEqual(sent.filter { $0["attempts"] as? Int == 2 }.count, 1, "the write in flight at the kill, resent once")
        XCTAssertEqual(sent.filter { $0["attempts"] as? Int == 1 }.count, 3)
    }

    /// A recipe that does not look before it writes: it creates a user, grants them the
    /// Hub and sends them three notifications (the Hub takes a second identical one as
    /// a second notification). The apply is killed on a pending notification and
    /// finished by `hubscript runs resume`, a pass without the plan: it replays the
    /// create from the journal, so it learns the same id, and sends every later write
    /// under the key the apply used — each notification is made once.
    static let createAndNotify = """
        recipe {
          name = "create-notify",
          version = "1.0.0",
          description = "Test fixture: create a user, then notify them three times.",
          needs = { "users.manage", "entitlements.manage", "notifications.send" },
        }
        local u = hub.users.create({ email = "nia@example.com", status = "active" })
        hub.entitlements.grant(u.id, { application_id = "app_hub" })
        for i = 1, 3 do
          hub.notifications.send("app_hub", { user_id = u.id, title = "Welcome " .. i, body = "Hello.", category = "test.welcome" })
        end
        print("notified " .. u.id)
        """

    func testAnApplyKilledOnAWriteUsingTheNewIDIsResumedWithEachWriteOnce() throws {
        let (cli, server, reader, extra) = try servedWithLatency()
        defer { server.stop() }
        let recipe = try cli.file("create-notify.lua", Self.createAndNotify)
        try cli.run(["plan", recipe, "--out", "plan.json"] + extra, expect: 0)
        let (runID, writes) = try loadPlan(cli, "plan.json")
        XCTAssertEqual(writes.map { $0.string("path") ?? "?" }, [
            "/users", "/users/usr_planned_1/entitlements", "/applications/app_hub/notifications",
            "/applications/app_hub/notifications", "/applications/app_hub/notifications",
        ])
        XCTAssertEqual((writes[2]["body"] as? [String: Any])?.string("user_id"), "usr_planned_1")

        let states = try cli.killOnPending(["apply", "plan.json"] + extra, runID: runID, atDone: 3)
        XCTAssertTrue((3...4).contains(states["done", default: 0]), "\(states)")
        XCTAssertEqual(states["pending"], 1, "\(states)")

        let resumed = try cli.run(["runs", "resume", runID] + extra, expect: 0)
        let users = try reader.all("/users", "email=nia%40example.com")
        XCTAssertEqual(users.count, 1, "\(users)")
        let id = try XCTUnwrap(users.first?.string("id"))
        XCTAssertEqual(resumed.stdout, "notified \(id)\n", resumed.output)
        let notified = try reader.all("/audit-events", "action=notification.sent&target_user_id=\(id)")
        XCTAssertEqual(notified.count, 3, "\(notified)")
        let sent = try journalled(cli, runID)
        XCTAssertEqual(sent.map { $0.string("state") ?? "?" }, ["done", "done", "done", "done", "done"])
        XCTAssertEqual(sent.map { $0.string("path") ?? "?" }, [
            "/users", "/users/\(id)/entitlements", "/applications/app_hub/notifications",
            "/applications/app_hub/notifications", "/applications/app_hub/notifications",
        ])
    }
}
