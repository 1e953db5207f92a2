import Foundation
import XCTest

/// docs/design.md "Plan and apply", through the CLI: `hubscript plan --out` then
/// `hubscript apply` does what a plain run does; a plan is refused when the data, the
/// recipe or the params changed since it was made.
final class PlanApplyTests: XCTestCase {
    /// A recipe that changes one thing of ada's between plan and apply.
    static let changeRecipe = """
        recipe {
          name = "change-ada",
          version = "1.0.0",
          description = "Test fixture: change one thing of ada's.",
          params = { session = { type = "string" }, entitlement = { type = "string" } },
          needs = { "users.manage", "entitlements.manage" },
        }
        if params.session then hub.sessions.revoke("usr_ada", params.session) end
        if params.entitlement then hub.entitlements.revoke(params.entitlement, "changed between plan and apply") end
        """

    /// What ada looks like in a sandbox, and the audit actions about her.
    struct AdaState: Equatable {
        var status: String?
        var entitlements: [String: String]  // id → status
        var roles: [String]
        var liveSessions: [String]
        var apiKeys: [String]
        var acmeMember: Bool
        var auditActions: [String]  // sorted, with repeats
    }

    func adaState(_ cli: CLIHarness, state: URL) throws -> AdaState {
        let hub = try cli.sandbox(state: state)
        let user = try hub.get("/users/usr_ada")
        let entitlements = try hub.all("/users/usr_ada/entitlements", "include_inactive=true")
        return AdaState(
            status: user.string("status"),
            entitlements: Dictionary(uniqueKeysWithValues: entitlements.map { ($0.string("id") ?? "?", $0.string("status") ?? "?") }),
            roles: try hub.all("/users/usr_ada/roles").compactMap { $0.string("role_id") }.sorted(),
            liveSessions: try hub.all("/users/usr_ada/sessions").compactMap { $0.string("id") }.sorted(),
            apiKeys: try hub.all("/api-keys", "owner_user_id=usr_ada").compactMap { $0.string("id") }.sorted(),
            acmeMember: try hub.all("/organizations/org_acme/members").contains { $0.string("user_id") == "usr_ada" || $0.string("id") == "usr_ada" },
            auditActions: try hub.all("/audit-events", "target_user_id=usr_ada").compactMap { $0.string("action") }.sorted())
    }

    /// All audit events of the sandbox, newest first, as `id action` lines.
    func auditIDs(_ cli: CLIHarness, state: URL) throws -> [String] {
        try cli.sandbox(state: state).all("/audit-events").map { "\($0.string("id") ?? "?") \($0.string("action") ?? "?")" }
    }

    /// Copies recipes/offboard.lua into the test folder; returns its name there (relative
    /// to the CLI's working directory, as a user would type it).
    func offboardCopy(_ cli: CLIHarness) throws -> String {
        let source = try String(contentsOf: CLIHarness.repoRoot.appendingPathComponent("recipes/offboard.lua"), encoding: .utf8)
        try cli.file("offboard.lua", source)
        return "offboard.lua"
    }

    func testPlanThenApplyLeavesTheSameStateAsAPlainRun() throws {
        let cli = try CLIHarness(testCase: self)
        let recipe = try offboardCopy(cli)
        let plainState = cli.root.appendingPathComponent("plain")
        let planState = cli.root.appendingPathComponent("planned")

        let plain = try cli.run([recipe, "--param", "user=ada@example.com"], state: plainState, expect: 0)
        XCTAssertTrue(plain.stderr.contains("11 writes"), plain.stderr)

        try cli.resetSandbox(state: planState)
        let before = try adaState(cli, state: planState)
        let plan = try cli.run(["plan", recipe, "--param", "user=ada@example.com", "--out", "plan.json"], state: planState, expect: 0)
        XCTAssertTrue(plan.stderr.contains("plan saved to plan.json: 11 writes; apply it with hubscript apply plan.json"), plan.stderr)
        XCTAssertEqual(try adaState(cli, state: planState), before, "plan must not change anything")

        let apply = try cli.run(["apply", "plan.json"], state: planState, expect: 0)
        XCTAssertTrue(apply.stderr.contains("11 writes"), apply.stderr)
        XCTAssertFalse(apply.stderr.contains("warning"), apply.stderr)

        let viaRun = try adaState(cli, state: plainState)
        let viaPlan = try adaState(cli, state: planState)
        XCTAssertEqual(viaPlan, viaRun)
        // And the run did offboard her.
        XCTAssertEqual(viaRun.status, "suspended")
        XCTAssertEqual(viaRun.roles, ["role_member"])
        XCTAssertEqual(viaRun.liveSessions, [])
        XCTAssertEqual(viaRun.apiKeys, [])
        XCTAssertFalse(viaRun.acmeMember)
        XCTAssertTrue(viaRun.entitlements.values.allSatisfy { $0 == "revoked" }, "\(viaRun.entitlements)")
        for action in ["user.suspended", "session.revoked", "entitlement.revoked", "role.removed",
                       "api_key.revoked", "organization.member_removed"] {
            XCTAssertTrue(viaRun.auditActions.contains(action), "missing \(action) in \(viaRun.auditActions)")
        }
    }

    /// The data changed so that the plan's first write no longer fits: nothing is sent.
    func testStalePlanIsRefusedBeforeAnyWrite() throws {
        let cli = try CLIHarness(testCase: self)
        let recipe = try offboardCopy(cli)
        let change = try cli.file("change.lua", Self.changeRecipe)
        try cli.run(["plan", recipe, "--param", "user=ada@example.com", "--out", "plan.json"], expect: 0)
        let planData = try Data(contentsOf: cli.root.appendingPathComponent("plan.json"))
        let plan = try XCTUnwrap(try JSONSerialization.jsonObject(with: planData) as? [String: Any])
        let writes = try XCTUnwrap(plan["writes"] as? [[String: Any]])
        XCTAssertEqual(writes.count, 11)
        let firstPath = try XCTUnwrap(writes.first?.string("path"))
        XCTAssertTrue(firstPath.hasPrefix("/users/usr_ada/sessions/"), firstPath)
        let firstSession = String(firstPath.split(separator: "/").last!)
        let otherSession = firstSession == "ses_ada_phone" ? "ses_ada_laptop" : "ses_ada_phone"

        // The change: someone revokes the session the plan revokes first.
        try cli.run([change, "--param", "session=\(firstSession)"], expect: 0)
        let afterChange = try auditIDs(cli, state: cli.stateDir)
        let stateAfterChange = try adaState(cli, state: cli.stateDir)

        let apply = try cli.run(["apply", "plan.json"], expect: 4)
        XCTAssertTrue(apply.stderr.contains("""
            error: apply: the Hub's data changed since the plan was made; nothing was sent.
              write 1 in the plan: DELETE /users/usr_ada/sessions/\(firstSession) (revoke session \(firstSession) of usr_ada)
              write 1 now:         DELETE /users/usr_ada/sessions/\(otherSession) (revoke session \(otherSession) of usr_ada)
            (the plan has 11 writes; the recipe would now make 10)
            Make a new plan with hubscript plan, review it, and apply that one.

            """), apply.stderr)
        XCTAssertEqual(try auditIDs(cli, state: cli.stateDir), afterChange, "no audit event after the refused apply")
        XCTAssertEqual(try adaState(cli, state: cli.stateDir), stateAfterChange)
    }

    /// A change that only the plan's 7th write depends on (an entitlement revoked in
    /// between): apply checks the whole plan first (a quiet plan pass) and refuses
    /// before sending any write, not only before write 7.
    func testStalePlanAfterAnEntitlementChangeSendsNothing() throws {
        let cli = try CLIHarness(testCase: self)
        let recipe = try offboardCopy(cli)
        let change = try cli.file("change.lua", Self.changeRecipe)
        try cli.run(["plan", recipe, "--param", "user=ada@example.com", "--out", "plan.json"], expect: 0)
        try cli.run([change, "--param", "entitlement=ent_ada_wiki"], expect: 0)
        let afterChange = try auditIDs(cli, state: cli.stateDir)

        let apply = try cli.run(["apply", "plan.json"], expect: 4)
        XCTAssertTrue(apply.stderr.contains("""
            error: apply: the Hub's data changed since the plan was made; nothing was sent.
              write 7 in the plan: PATCH /entitlements/ent_ada_wiki (revoke ent_ada_wiki)
              write 7 now:         PATCH /entitlements/ent_ada_invoicer (revoke ent_ada_invoicer)
            (the plan has 11 writes; the recipe would now make 10)
            """), apply.stderr)
        XCTAssertEqual(try auditIDs(cli, state: cli.stateDir), afterChange, "no write was sent")
    }

    func testPlanOfAnEditedRecipeIsRefused() throws {
        let cli = try CLIHarness(testCase: self)
        let recipe = try offboardCopy(cli)
        try cli.run(["plan", recipe, "--param", "user=ada@example.com", "--out", "plan.json"], expect: 0)
        let before = try auditIDs(cli, state: cli.stateDir)
        let url = cli.root.appendingPathComponent(recipe)
        let original = try String(contentsOf: url, encoding: .utf8)
        try Data((original + "-- edited after the plan\n").utf8).write(to: url)
        let plan = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: cli.root.appendingPathComponent("plan.json"))) as? [String: Any])
        let planned = try XCTUnwrap((plan["recipe"] as? [String: Any])?.string("sha256")).prefix(12)
        let now = try sha256Hex(url).prefix(12)

        let apply = try cli.run(["apply", "plan.json"], expect: 2)
        XCTAssertTrue(apply.stderr.hasSuffix("""
            error: the plan was made with another version of offboard.lua (sha256 \(planned)…, now \(now)…); \
            nothing was sent. Make a new plan with hubscript plan offboard.lua and apply that one.

            """), apply.stderr)
        XCTAssertEqual(try auditIDs(cli, state: cli.stateDir), before)
    }

    func testPlanWithOtherParamsIsRefused() throws {
        let cli = try CLIHarness(testCase: self)
        let recipe = try offboardCopy(cli)
        try cli.run(["plan", recipe, "--param", "user=ada@example.com", "--out", "plan.json"], expect: 0)
        let before = try auditIDs(cli, state: cli.stateDir)

        // apply takes the params from the plan; it has no --param.
        let withParam = try cli.run(["apply", "plan.json", "--param", "user=support@example.com"], expect: 2)
        XCTAssertEqual(withParam.stderr, "hubscript apply: unknown option '--param'\nRun 'hubscript apply --help' for usage.\n")

        // A plan whose params are not what this recipe makes of them (made when `reason`
        // had no default, or edited): refused, naming the difference.
        let url = cli.root.appendingPathComponent("plan.json")
        var plan = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        plan["params"] = ["user": "ada@example.com"]
        try JSONSerialization.data(withJSONObject: plan).write(to: cli.root.appendingPathComponent("other.json"))
        let apply = try cli.run(["apply", "other.json"], expect: 2)
        XCTAssertTrue(apply.stderr.hasSuffix("""
            error: the plan was made with other params (plan → now: +reason: "offboarded"); nothing was sent. \
            Apply it with the plan's params, or make a new plan with hubscript plan offboard.lua and these params.

            """), apply.stderr)
        XCTAssertEqual(try auditIDs(cli, state: cli.stateDir), before)
    }

    /// SHA-256 of a file, by sha256sum.
    func sha256Hex(_ url: URL) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        p.arguments = [url.path]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(String(decoding: data, as: UTF8.self).prefix(64))
    }
}
