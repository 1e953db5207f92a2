import Foundation
import XCTest
import Configuration
import HTTPKit
import RunJournal
@testable import Console

/// The plans page and its Approve / Reject buttons: a signed-in Hub user, asked again
/// when they press; the CSRF and origin checks; not the maker; holding what the plan's
/// writes need; hostile text from the journal shown as text.
final class ConsolePlanApprovalTests: XCTestCase {
    let sha = String(repeating: "c", count: 64)

    func console(maker: String = "usr_ada") throws -> ConsoleFixture {
        let console = try ConsoleFixture(actions: try StubActions())
        try console.journal.recordPlan(PlanRecord(
            id: "run_p1", contentSHA256: sha, path: "/plans/<b>p.json", recipePath: "/srv/\"><img src=x onerror=alert(1)>.lua",
            profile: "prod", maker: maker, makerKind: .hub, writes: 2, permissions: ["users.manage"], required: 1))
        return console
    }

    /// Signs `email` in and returns their cookie and the plan page's CSRF token.
    func signIn(_ console: ConsoleFixture, _ email: String, mfa: Bool = false) throws -> (cookie: String, csrf: String) {
        let cookie = try console.signInWithToken()
        let csrf = try XCTUnwrap(ConsoleFixture.csrf(console.get("/signin", cookie: cookie)))
        var form = [("csrf", csrf), ("email", email), ("password", "pw")]
        if mfa { form.append(("mfa_code", "123456")) }
        let signedIn = console.post("/signin", cookie: cookie, form: form)
        XCTAssertEqual(signedIn.status, 303, ConsoleFixture.text(signedIn))
        let personCookie = try XCTUnwrap(ConsoleFixture.cookie(signedIn))
        let page = console.get("/plans/run_p1", cookie: personCookie)
        XCTAssertTrue(ConsoleFixture.text(page).contains("id=\"approve-button\""), ConsoleFixture.text(page))
        return (personCookie, try XCTUnwrap(ConsoleFixture.csrf(page)))
    }

    func testThePlansPageListsPlansAndEscapesTheirText() throws {
        let console = try console()
        let cookie = try console.signInWithToken()
        let list = ConsoleFixture.text(console.get("/plans", cookie: cookie))
        XCTAssertTrue(list.contains("<tr class=\"plan\" data-plan-id=\"run_p1\"><td class=\"mono\"><a class=\"plan-link\" href=\"/plans/run_p1\"><bdi>run_p1</bdi></a>"), list)
        XCTAssertTrue(list.contains("<td class=\"status status-waiting\">waiting</td><td class=\"num\">0/1</td>"), list)
        XCTAssertFalse(list.contains("<img src=x"), list)
        let page = ConsoleFixture.text(console.get("/plans/run_p1", cookie: cookie))
        XCTAssertFalse(page.contains("<img src=x"))
        XCTAssertFalse(page.contains("<b>p.json"))
        XCTAssertTrue(page.contains("id=\"plan-signin\""), "a visitor who has not signed in is asked to")
        XCTAssertFalse(page.contains("id=\"approve-button\""))
        XCTAssertEqual(console.get("/plans/nope", cookie: cookie).status, 404)
    }

    func testApproveNeedsTheCSRFTokenAndASignedInPerson() throws {
        let console = try console()
        let cookie = try console.signInWithToken()
        let csrf = try XCTUnwrap(ConsoleFixture.csrf(console.get("/signin", cookie: cookie)))
        let noToken = console.post("/plans/run_p1/approve", cookie: cookie, form: [("sha256", sha)])
        XCTAssertEqual(noToken.status, 403)
        XCTAssertTrue(ConsoleFixture.text(noToken).contains("CSRF token is missing or stale"))
        let crossSite = console.post("/plans/run_p1/approve", cookie: cookie, form: [("csrf", csrf), ("sha256", sha)],
                                     headers: [("Origin", "https://evil.example")])
        XCTAssertEqual(crossSite.status, 403)
        let anonymous = console.post("/plans/run_p1/approve", cookie: cookie, form: [("csrf", csrf), ("sha256", sha)])
        XCTAssertEqual(anonymous.status, 403)
        XCTAssertTrue(ConsoleFixture.text(anonymous).contains("Approving a plan needs a signed-in Hub user"))
        XCTAssertEqual(try console.journal.plan("run_p1")?.decisions, [])
    }

    func testAPersonWithoutThePermissionsOrTheMakerIsRefused() throws {
        let console = try console(maker: "usr_admin")
        let support = try signIn(console, "support@example.com")
        let refused = console.post("/plans/run_p1/approve", cookie: support.cookie, form: [("csrf", support.csrf), ("sha256", sha)])
        XCTAssertEqual(refused.status, 403)
        XCTAssertTrue(ConsoleFixture.text(refused).contains(
            "usr_support &lt;support@example.com&gt; lacks what plan run_p1&#39;s writes need: users.manage"), ConsoleFixture.text(refused))
        let maker = try signIn(console, "admin@example.com", mfa: true)
        let own = console.post("/plans/run_p1/approve", cookie: maker.cookie, form: [("csrf", maker.csrf), ("sha256", sha)])
        XCTAssertEqual(own.status, 403)
        XCTAssertTrue(ConsoleFixture.text(own).contains("usr_admin &lt;admin@example.com&gt; made plan run_p1 and cannot approve it"))
        XCTAssertEqual(try console.journal.plan("run_p1")?.decisions, [])
    }

    /// The approvals a plan needs are the larger of those recorded with it and those the
    /// rules in force ask now (as `hubscript plans` and `apply` count them): a plan with
    /// one approval that the rules now want two of is still waiting, not approved.
    func testAPlanCountsTheApprovalsTheRulesInForceRequire() throws {
        let tightened = ApprovalsConfig(rules: [ApprovalsConfig.Rule(required: 2, profiles: ["prod"])])
        let console = try ConsoleFixture(actions: try StubActions(), approvals: tightened)
        try console.journal.recordPlan(PlanRecord(
            id: "run_p1", contentSHA256: sha, path: "/plans/p.json", recipePath: "/srv/offboard.lua", profile: "prod",
            maker: "usr_ada", makerKind: .hub, writes: 2, permissions: ["users.manage"], required: 1))
        try console.journal.approvePlan("run_p1", contentSHA256: sha, person: "usr_admin", personName: "admin@example.com",
                                        permissions: ["users.manage"])
        let cookie = try console.signInWithToken()
        let list = ConsoleFixture.text(console.get("/plans", cookie: cookie))
        XCTAssertTrue(list.contains("<td class=\"status status-waiting\">waiting</td><td class=\"num\">1/2</td>"), list)
        let page = ConsoleFixture.text(console.get("/plans/run_p1", cookie: cookie))
        XCTAssertTrue(page.contains("<dd id=\"plan-status\" class=\"status status-waiting\">waiting</dd>"), page)
        XCTAssertTrue(page.contains("<dd id=\"plan-approvals\">1 of 2 required</dd>"), page)

        // A rule that does not cover the plan leaves it at what was recorded.
        let other = try ConsoleFixture(journal: console.journal, approvals: ApprovalsConfig(rules: [
            ApprovalsConfig.Rule(required: 3, profiles: ["staging"])]))
        let otherCookie = try other.signInWithToken()
        let shown = ConsoleFixture.text(other.get("/plans/run_p1", cookie: otherCookie))
        XCTAssertTrue(shown.contains("<dd id=\"plan-status\" class=\"status status-approved\">approved</dd>"), shown)
        XCTAssertTrue(shown.contains("<dd id=\"plan-approvals\">1 of 1 required</dd>"), shown)
    }

    func testAnApprovalIsRecordedForTheContentShownThenRejectionStopsIt() throws {
        let console = try console()
        let admin = try signIn(console, "admin@example.com", mfa: true)
        // A form for other content than the journal's (the page was stale) records nothing.
        let stale = console.post("/plans/run_p1/approve", cookie: admin.cookie,
                                 form: [("csrf", admin.csrf), ("sha256", String(repeating: "d", count: 64))])
        XCTAssertEqual(stale.status, 409)
        let approved = console.post("/plans/run_p1/approve", cookie: admin.cookie, form: [("csrf", admin.csrf), ("sha256", sha)])
        XCTAssertEqual(approved.status, 303, ConsoleFixture.text(approved))
        XCTAssertEqual(approved.headers["Location"], "/plans/run_p1?approved=1")
        let page = ConsoleFixture.text(console.get("/plans/run_p1?approved=1", cookie: admin.cookie))
        XCTAssertTrue(page.contains("Your approval is recorded."))
        XCTAssertTrue(page.contains("id=\"plan-status\" class=\"status status-approved\">approved</dd>"), page)
        let record = try XCTUnwrap(try console.journal.plan("run_p1"))
        XCTAssertEqual(record.approvals(for: sha).map(\.person), ["usr_admin"])
        XCTAssertEqual(record.approvals(for: sha).map(\.personName), ["admin@example.com"])

        let noReason = console.post("/plans/run_p1/reject", cookie: admin.cookie, form: [("csrf", admin.csrf), ("sha256", sha)])
        XCTAssertEqual(noReason.status, 400)
        let rejected = console.post("/plans/run_p1/reject", cookie: admin.cookie,
                                    form: [("csrf", admin.csrf), ("sha256", sha), ("reason", "<script>x</script>")])
        XCTAssertEqual(rejected.status, 303)
        XCTAssertEqual(try console.journal.plan("run_p1")?.status, .rejected)
        let after = ConsoleFixture.text(console.get("/plans/run_p1", cookie: admin.cookie))
        XCTAssertTrue(after.contains("&lt;script&gt;x&lt;/script&gt;"))
        XCTAssertFalse(after.contains("<script>x"))
        XCTAssertFalse(after.contains("id=\"approve-button\""), "a rejected plan takes no more decisions")
    }
}
