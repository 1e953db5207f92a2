import Foundation
import XCTest
import TestSupport

/// Two-person approval before apply, through the built binary against a served sandbox
/// and its seeded people: the plan's maker cannot approve it, nor can a person lacking
/// what its writes need; an approval lets apply send the writes; a plan changed after
/// its approval, or rejected, is refused before anything is sent (exit 3).
final class PlanApprovalCLITests: XCTestCase {
    static let suspend = """
        recipe { name = "suspend", needs = { "users.manage" } }
        hub.users.suspend("usr_ada", { reason = "left" })
        """

    struct Setup {
        let lab: GateLab
        let config: String
        let recipe: String
        let plan: String
    }

    /// A sandbox, a configuration with `approvals`, people signed in (admin: every
    /// permission; support: users.list and audit.view), a key profile (`ops`), and the
    /// suspend recipe. `journal`: the configuration's `journal` line, if any.
    func lab(approvals: String = "approvals = { required = 1 }", journal: String = "") throws -> Setup {
        let lab = try GateLab(testCase: self)
        let config = try lab.config("""
            admin = { hub_url = "URL", email = "admin@example.com", rate_limit_per_minute = 0 },
            support = { hub_url = "URL", email = "support@example.com", rate_limit_per_minute = 0 },
            ops = { hub_url = "URL", api_key = "\(GateCLITests.opsKey)", rate_limit_per_minute = 0,
                    api_key_permissions = { "users.list", "users.manage" } },
            """, extra: approvals + (journal.isEmpty ? "" : ", " + journal))
        try lab.login(config, profile: "admin")
        try lab.login(config, profile: "support")
        let recipe = try lab.cli.file("suspend.lua", Self.suspend)
        return Setup(lab: lab, config: config, recipe: recipe, plan: lab.cli.root.appendingPathComponent("plan.json").path)
    }

    func make(_ s: Setup, profile: String, state: URL? = nil) throws -> String {
        let made = try s.lab.cli.run(["plan", s.recipe, "--out", s.plan, "--config", s.config, "--profile", profile], state: state)
        XCTAssertEqual(made.status, 0, made.output)
        let id = try XCTUnwrap(planID(s.plan))
        XCTAssertTrue(made.stderr.contains("plan saved to \(s.plan): 1 writes; it needs 1 approval (hubscript approve \(id)) "
                                            + "before hubscript apply \(s.plan)\n"), made.stderr)
        return id
    }

    func planID(_ path: String) throws -> String? {
        let doc = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any]
        return doc?["run_id"] as? String
    }

    func adaStatus(_ s: Setup) throws -> String { try s.lab.adaState().status }

    func testTheMakerCannotApproveTheirOwnPlan() throws {
        let s = try lab()
        defer { s.lab.server.stop() }
        let id = try make(s, profile: "admin")
        let own = try s.lab.cli.run(["approve", s.plan, "--config", s.config, "--profile", "admin"])
        XCTAssertEqual(own.status, 3, own.output)
        XCTAssertEqual(own.stdout, "")
        XCTAssertEqual(own.stderr, """
            hubscript approve: usr_admin <admin@example.com> made plan \(id) and cannot approve it: another person must \
            (hubscript approve \(id) --profile THEIR_SESSION_PROFILE)

            """)
        let apply = try s.lab.cli.run(["apply", s.plan, "--config", s.config, "--profile", "admin"])
        XCTAssertEqual(apply.status, 3, apply.output)
        XCTAssertEqual(apply.stderr, """
            error: plan \(id) needs 1 approval and has 0 (none yet); nothing was sent.
            It needs 1 more from a person other than its maker usr_admin holding users.manage: \
            hubscript approve \(id) --profile THEIR_SESSION_PROFILE

            """)
        // Under --json: an error event and a summary with exit code 3, and nothing sent.
        let json = try s.lab.cli.run(["apply", s.plan, "--json", "--config", s.config, "--profile", "admin"])
        XCTAssertEqual(json.status, 3, json.output)
        let events = json.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        XCTAssertEqual(events.map { $0["type"] as? String }, ["error", "summary"], json.stdout)
        XCTAssertEqual(events.last?["exit_code"] as? Int, 3, json.stdout)
        XCTAssertEqual(try adaStatus(s), "active")
    }

    func testAnApproverWithoutThePermissionsIsRefusedAndAKeyCannotApprove() throws {
        let s = try lab()
        defer { s.lab.server.stop() }
        let id = try make(s, profile: "ops")
        let support = try s.lab.cli.run(["approve", id, "--config", s.config, "--profile", "support"])
        XCTAssertEqual(support.status, 3, support.output)
        XCTAssertEqual(support.stderr, """
            hubscript approve: usr_support <support@example.com> lacks what plan \(id)'s writes need: users.manage; \
            only a person holding users.manage can approve it

            """)
        let key = try s.lab.cli.run(["approve", id, "--config", s.config, "--profile", "ops"])
        XCTAssertEqual(key.status, 3, key.output)
        XCTAssertEqual(key.stderr, """
            hubscript approve: approve needs a person: profile 'ops' uses an API key, not a user's session. \
            Sign in with hubscript login --profile YOUR_PROFILE and use --profile YOUR_PROFILE.

            """)
        XCTAssertEqual(try s.lab.cli.run(["apply", s.plan, "--config", s.config, "--profile", "ops"]).status, 3)
        XCTAssertEqual(try adaStatus(s), "active")
    }

    func testAnApprovedPlanIsAppliedAndRecorded() throws {
        let s = try lab()
        defer { s.lab.server.stop() }
        let id = try make(s, profile: "ops")
        let approved = try s.lab.cli.run(["approve", s.plan, "--config", s.config, "--profile", "admin"], expect: 0)
        XCTAssertEqual(approved.stdout, "approved plan \(id) as admin@example.com: 1 of 1 approval\n")
        let again = try s.lab.cli.run(["approve", s.plan, "--config", s.config, "--profile", "admin"])
        XCTAssertEqual(again.status, 3, again.output)
        XCTAssertEqual(again.stderr, "hubscript approve: usr_admin <admin@example.com> already approved plan \(id); another person must approve it\n")
        let list = try s.lab.cli.run(["plans", "list", "--config", s.config], expect: 0)
        XCTAssertTrue(list.stdout.contains("\(id)  approved  1/1  1  "), list.stdout)
        let apply = try s.lab.cli.run(["apply", s.plan, "--config", s.config, "--profile", "ops"])
        XCTAssertEqual(apply.status, 0, apply.output)
        XCTAssertEqual(try adaStatus(s), "suspended")
        let shown = try s.lab.cli.run(["plans", "show", id, "--config", s.config], expect: 0)
        XCTAssertTrue(shown.stdout.contains("  status       applied\n"), shown.stdout)
        XCTAssertTrue(shown.stdout.contains("  approved  usr_admin <admin@example.com>\n"), shown.stdout)
        XCTAssertTrue(shown.stdout.contains("  applied  "), shown.stdout)
    }

    /// Two approvals required: one is not enough (apply names who approved and how many
    /// more are needed); a person refused for lacking a permission is accepted once an
    /// admin gives it (their permissions are asked at the moment of approval); the second
    /// approval lets apply send the writes.
    func testTwoApprovalsFromTwoPeopleAreNeededWhenTheRuleSaysTwo() throws {
        let s = try lab(approvals: "approvals = { { required = 1 }, { required = 2, permissions = { \"users.manage\" } } }")
        defer { s.lab.server.stop() }
        let made = try s.lab.cli.run(["plan", s.recipe, "--out", s.plan, "--config", s.config, "--profile", "ops"], expect: 0)
        let id = try XCTUnwrap(planID(s.plan))
        XCTAssertTrue(made.stderr.contains("it needs 2 approvals (hubscript approve \(id)) before hubscript apply"), made.stderr)
        XCTAssertEqual(try s.lab.cli.run(["approve", id, "--config", s.config, "--profile", "support"]).status, 3)
        try s.lab.cli.run(["approve", id, "--config", s.config, "--profile", "admin"], expect: 0)
        let one = try s.lab.cli.run(["apply", s.plan, "--config", s.config, "--profile", "ops"])
        XCTAssertEqual(one.status, 3, one.output)
        XCTAssertEqual(one.stderr, """
            error: plan \(id) needs 2 approvals and has 1 (approved by usr_admin <admin@example.com>); nothing was sent.
            It needs 1 more from a person other than its maker \(NSUserName()) holding users.manage: \
            hubscript approve \(id) --profile THEIR_SESSION_PROFILE

            """)
        XCTAssertEqual(try adaStatus(s), "active")
        // An admin gives support the role; support's next approval is checked afresh.
        let grant = try s.lab.cli.file("grant.lua", """
            recipe { name = "grant", needs = { "roles.manage" } }
            hub.roles.assign("usr_support", "role_superadmin")
            """)
        try s.lab.cli.run(["run", grant, "--config", s.config, "--profile", "admin"], expect: 0)
        let second = try s.lab.cli.run(["approve", id, "--config", s.config, "--profile", "support"])
        XCTAssertEqual(second.status, 0, second.output)
        XCTAssertEqual(second.stdout, "approved plan \(id) as support@example.com: 2 of 2 approvals\n")
        try s.lab.cli.run(["apply", s.plan, "--config", s.config, "--profile", "ops"], expect: 0)
        XCTAssertEqual(try adaStatus(s), "suspended")
    }

    /// A plan id that is also the name of a file here holding another plan names two
    /// plans: approve and reject refuse it rather than decide about the file's plan.
    func testAPlanIDThatIsAlsoAFileOfAnotherPlanIsRefused() throws {
        let s = try lab()
        defer { s.lab.server.stop() }
        let named = try make(s, profile: "ops")
        let other = s.lab.cli.root.appendingPathComponent("other.plan.json").path
        try s.lab.cli.run(["plan", s.recipe, "--out", other, "--config", s.config, "--profile", "ops"], expect: 0)
        let otherID = try XCTUnwrap(planID(other))
        try FileManager.default.copyItem(atPath: other, toPath: s.lab.cli.root.appendingPathComponent(named).path)
        for (command, extra) in [("approve", [String]()), ("reject", ["--reason", "not this one"])] {
            let refused = try s.lab.cli.run([command, named, "--config", s.config, "--profile", "admin"] + extra)
            XCTAssertEqual(refused.status, 3, refused.output)
            XCTAssertEqual(refused.stdout, "")
            XCTAssertEqual(refused.stderr, """
                hubscript \(command): \(named) names two plans: the plan \(named) the journal holds, and the file \(named) here, \
                which holds plan \(otherID); nothing was recorded. Give the file as ./\(named), or the plan id from another folder.

                """)
        }
        let list = try s.lab.cli.run(["plans", "show", otherID, "--config", s.config], expect: 0)
        XCTAssertTrue(list.stdout.contains("  approvals    0 of 1 required\n"), list.stdout)
        // The file named as a path is the file's plan, as before.
        try s.lab.cli.run(["approve", "./" + named, "--config", s.config, "--profile", "admin"], expect: 0)
        let shown = try s.lab.cli.run(["plans", "show", otherID, "--config", s.config], expect: 0)
        XCTAssertTrue(shown.stdout.contains("  approvals    1 of 1 required\n"), shown.stdout)
        // From another folder the id names one plan: the one the journal holds, still unapproved.
        let elsewhere = s.lab.cli.root.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let still = try s.lab.cli.run(["plans", "show", named, "--config", s.config], cwd: elsewhere)
        XCTAssertEqual(still.status, 0, still.output)
        XCTAssertTrue(still.stdout.contains("  approvals    0 of 1 required\n"), still.stdout)
    }

    func testAPlanEditedAfterItsApprovalIsRefused() throws {
        let s = try lab()
        defer { s.lab.server.stop() }
        let id = try make(s, profile: "ops")
        try s.lab.cli.run(["approve", s.plan, "--config", s.config, "--profile", "admin"], expect: 0)
        // The reason the write sends, edited in the file after the approval.
        let text = try String(contentsOfFile: s.plan, encoding: .utf8)
        XCTAssertTrue(text.contains("\"left\""))
        try Data(text.replacingOccurrences(of: "\"left\"", with: "\"gone\"").utf8).write(to: URL(fileURLWithPath: s.plan))
        let apply = try s.lab.cli.run(["apply", s.plan, "--config", s.config, "--profile", "ops"])
        XCTAssertEqual(apply.status, 3, apply.output)
        XCTAssertTrue(apply.stderr.hasPrefix("error: plan \(id) changed since it was recorded and approved (its content hash is "),
                      apply.stderr)
        XCTAssertTrue(apply.stderr.hasSuffix("nothing was sent. Make a new plan and have it approved.\n"), apply.stderr)
        // Approving the edited file is refused too: it is not the plan that was recorded.
        let approve = try s.lab.cli.run(["approve", s.plan, "--config", s.config, "--profile", "admin"])
        XCTAssertEqual(approve.status, 3, approve.output)
        XCTAssertEqual(approve.stderr, """
            hubscript approve: the plan file \(s.plan) is not the plan \(id) that was recorded (its content changed); \
            nothing was recorded. Make a new plan.

            """)
        XCTAssertEqual(try adaStatus(s), "active")
    }

    func testARejectedPlanIsRefused() throws {
        let s = try lab()
        defer { s.lab.server.stop() }
        let id = try make(s, profile: "ops")
        try s.lab.cli.run(["approve", s.plan, "--config", s.config, "--profile", "admin"], expect: 0)
        let noReason = try s.lab.cli.run(["reject", s.plan, "--config", s.config, "--profile", "admin"])
        XCTAssertEqual(noReason.status, 2, noReason.output)
        let rejected = try s.lab.cli.run(["reject", s.plan, "--reason", "wrong person", "--config", s.config, "--profile", "admin"],
                                         expect: 0)
        XCTAssertEqual(rejected.stdout, "rejected plan \(id) as admin@example.com: it will not be applied\n")
        let apply = try s.lab.cli.run(["apply", s.plan, "--config", s.config, "--profile", "ops"])
        XCTAssertEqual(apply.status, 3, apply.output)
        XCTAssertEqual(apply.stderr, """
            error: plan \(id) was rejected by usr_admin <admin@example.com>: wrong person; nothing was sent. Make a new plan.

            """)
        XCTAssertEqual(try adaStatus(s), "active")
    }

    /// A plan the journal does not hold (made against another journal) cannot show any
    /// approval: refused before anything is sent.
    func testAPlanTheJournalDoesNotHoldIsRefused() throws {
        let s = try lab()
        defer { s.lab.server.stop() }
        let id = try make(s, profile: "ops")
        let elsewhere = s.lab.cli.root.appendingPathComponent("elsewhere-state")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let apply = try s.lab.cli.run(["apply", s.plan, "--config", s.config, "--profile", "ops"], state: elsewhere)
        XCTAssertEqual(apply.status, 3, apply.output)
        XCTAssertEqual(apply.stderr, """
            error: plan \(id) needs 1 approval and the journal does not hold it (a plan is recorded by hubscript plan \
            RECIPE --out PLAN.json, with this journal); nothing was sent

            """)
        XCTAssertEqual(try adaStatus(s), "active")
    }

    func testWithoutApprovalRulesAPlanAppliesAsBefore() throws {
        let s = try lab(approvals: "")
        defer { s.lab.server.stop() }
        let made = try s.lab.cli.run(["plan", s.recipe, "--out", s.plan, "--config", s.config, "--profile", "ops"], expect: 0)
        XCTAssertTrue(made.stderr.contains("plan saved to \(s.plan): 1 writes; apply it with hubscript apply \(s.plan)\n"), made.stderr)
        try s.lab.cli.run(["apply", s.plan, "--config", s.config, "--profile", "ops"], expect: 0)
        XCTAssertEqual(try adaStatus(s), "suspended")
    }

    /// Two hosts (two state folders) on one PostgreSQL journal: the plan made on one is
    /// approved on the other and applied on the first.
    func testApprovalsAreSharedThroughAPostgreSQLJournal() throws {
        let base = try TestPostgres.freshSchemaURL(TestPostgres.requiredBaseURL())
        let s = try lab(journal: "journal = \"\(base)\"")
        defer { s.lab.server.stop() }
        let otherHost = s.lab.cli.root.appendingPathComponent("other-host-state")
        try FileManager.default.createDirectory(at: otherHost, withIntermediateDirectories: true)
        let id = try make(s, profile: "ops")
        // The approver signs in on the other host.
        let login = try s.lab.cli.run(["login", "--config", s.config, "--profile", "admin", "--password-stdin", "--mfa-code", "123456"],
                                      state: otherHost, input: "any password\n")
        XCTAssertEqual(login.status, 0, login.output)
        let approved = try s.lab.cli.run(["approve", id, "--config", s.config, "--profile", "admin"], state: otherHost)
        XCTAssertEqual(approved.status, 0, approved.output)
        try s.lab.cli.run(["apply", s.plan, "--config", s.config, "--profile", "ops"], expect: 0)
        XCTAssertEqual(try adaStatus(s), "suspended")
        let shown = try s.lab.cli.run(["plans", "show", id, "--config", s.config], state: otherHost)
        XCTAssertTrue(shown.stdout.contains("  status       applied\n"), shown.output)
        // The plan file, shown on the other host, carries the shared record.
        let file = try s.lab.cli.run(["plan", "show", s.plan, "--config", s.config], state: otherHost)
        XCTAssertTrue(file.stdout.contains("  status       applied\n  approvals    1 of 1 required\n"), file.output)
        XCTAssertTrue(file.stdout.contains("  approved  "), file.output)
        XCTAssertTrue(file.stdout.contains("  applied  "), file.output)
    }
}
