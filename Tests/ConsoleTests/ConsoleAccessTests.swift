import Foundation
import XCTest
import HTTPKit
@testable import Console

/// Who may read the console (the printed token, then its cookie) and who may act
/// (CSRF token, same origin, a signed-in Hub user with the permissions), and the
/// protective header fields of every answer.
final class ConsoleAccessTests: XCTestCase {
    func testEveryRequestWithoutTokenOrCookieIs401() throws {
        let console = try ConsoleFixture()
        for target in ["/", "/runs", "/runs/x", "/runs/x/events", "/jobs", "/triggers", "/plans", "/static/console.js",
                       "/signin", "/nothing"] {
            let response = console.get(target)
            XCTAssertEqual(response.status, 401, target)
            XCTAssertTrue(ConsoleFixture.text(response).contains("This console needs the link it printed when it started"), target)
            XCTAssertNil(response.headers["Set-Cookie"], target)
        }
        XCTAssertEqual(console.post("/jobs/nightly/fire", cookie: nil, form: [("csrf", "x")]).status, 401)
        XCTAssertEqual(console.get("/?token=" + String(repeating: "7e", count: 31) + "7f").status, 401)
        XCTAssertEqual(console.get("/?token=").status, 401)
        XCTAssertEqual(console.get("/runs", cookie: String(repeating: "a", count: 64)).status, 401)
        XCTAssertEqual(console.server.access.sessions.count, 0)
    }

    func testTheTokenSetsAStrictCookieAndLeavesTheAddress() throws {
        let console = try ConsoleFixture()
        let response = console.get("/runs?status=failed&token=\(ConsoleFixture.token)&job=a%26b")
        XCTAssertEqual(response.status, 303)
        XCTAssertEqual(response.headers["Location"], "/runs?status=failed&job=a%26b")
        let cookie = try XCTUnwrap(ConsoleFixture.cookie(response))
        XCTAssertEqual(response.headers["Set-Cookie"], "hubscript_console_8470=\(cookie); Path=/; HttpOnly; SameSite=Strict")
        XCTAssertEqual(cookie.count, 64)
        XCTAssertEqual(console.get("/runs", cookie: cookie).status, 200)
        // The redirect never leaves the console, whatever the path looked like.
        XCTAssertEqual(console.get("//evil.example/?token=\(ConsoleFixture.token)").headers["Location"], "/")
        XCTAssertEqual(console.get("/\\evil.example?token=\(ConsoleFixture.token)").headers["Location"], "/")
        XCTAssertEqual(console.get("/?token=\(ConsoleFixture.token)").headers["Location"], "/")
    }

    func testEveryAnswerCarriesTheProtectiveHeaders() throws {
        let console = try ConsoleFixture()
        let cookie = try console.signInWithToken()
        for response in [console.get("/runs", cookie: cookie), console.get("/"), console.get("/static/console.css", cookie: cookie),
                         console.get("/runs/none", cookie: cookie), console.get("/?token=\(ConsoleFixture.token)")] {
            XCTAssertEqual(response.headers["Content-Security-Policy"],
                           "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
                           + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
            XCTAssertEqual(response.headers["X-Content-Type-Options"], "nosniff")
            XCTAssertEqual(response.headers["Referrer-Policy"], "no-referrer")
            XCTAssertEqual(response.headers["Cache-Control"], "no-store")
            XCTAssertEqual(response.headers["X-Frame-Options"], "DENY")
        }
        XCTAssertEqual(console.get("/runs", cookie: cookie).headers["Content-Type"], "text/html; charset=utf-8")
        XCTAssertEqual(console.get("/static/console.js", cookie: cookie).headers["Content-Type"], "text/javascript; charset=utf-8")
        // No inline script or style anywhere: the policy holds.
        let page = ConsoleFixture.text(console.get("/runs", cookie: cookie))
        XCTAssertFalse(page.contains("<script>"))
        XCTAssertFalse(page.contains("<style"))
        XCTAssertFalse(page.contains("style=\""))
        XCTAssertFalse(page.contains(" on"), "no event handler attributes")
    }

    func testHealthzNeedsNoAccessAndOtherMethodsAre405() throws {
        let console = try ConsoleFixture()
        let health = console.get("/healthz")
        XCTAssertEqual(health.status, 200)
        XCTAssertEqual(ConsoleFixture.text(health), "ok\n")
        let put = console.server.handle(HTTPRequestMessage(method: "PUT", target: "/runs"))
        XCTAssertEqual(put.status, 405)
        XCTAssertEqual(put.headers["Allow"], "GET, HEAD, POST")
    }

    func testAPostNeedsTheCSRFTokenAndTheConsolesOrigin() throws {
        let console = try ConsoleFixture(actions: try StubActions(), jobs: [try ConsoleFixture.job()])
        let cookie = try console.signInWithToken()
        let csrf = try XCTUnwrap(ConsoleFixture.csrf(console.get("/jobs/nightly", cookie: cookie)))
        func refusal(_ response: HTTPResponseMessage) -> String {
            XCTAssertEqual(response.status, 403)
            return ConsoleFixture.text(response)
        }
        XCTAssertTrue(refusal(console.post("/jobs/nightly/fire", cookie: cookie, form: [])).contains(
            "the form&#39;s CSRF token is missing or stale; reload the page and try again"))
        XCTAssertTrue(refusal(console.post("/jobs/nightly/fire", cookie: cookie, form: [("csrf", String(repeating: "0", count: 64))])).contains(
            "the form&#39;s CSRF token is missing or stale"))
        XCTAssertTrue(refusal(console.post("/jobs/nightly/fire", cookie: cookie, form: [("csrf", csrf)],
                                           headers: [("Origin", "https://evil.example")])).contains(
            "the request came from another origin (https://evil.example); use the console&#39;s own pages"))
        XCTAssertTrue(refusal(console.post("/jobs/nightly/fire", cookie: cookie, form: [("csrf", csrf)],
                                           headers: [("Origin", "http://127.0.0.1:8470"), ("Sec-Fetch-Site", "cross-site")])).contains(
            "the request came from another site (Sec-Fetch-Site: cross-site)"))
        XCTAssertTrue(refusal(console.post("/jobs/nightly/fire", cookie: cookie, form: [("csrf", csrf)], headers: [])).contains(
            "the request says neither where it comes from (Origin) nor Sec-Fetch-Site"))
        XCTAssertTrue(refusal(console.post("/jobs/nightly/fire", cookie: cookie, form: [("csrf", csrf)],
                                           headers: [("Origin", "http://127.0.0.1:8470.evil.example")])).contains("another origin"))
        // A hidden origin (what a browser sends under the console's no-referrer policy) proves nothing alone.
        XCTAssertTrue(refusal(console.post("/jobs/nightly/fire", cookie: cookie, form: [("csrf", csrf)],
                                           headers: [("Origin", "null")])).contains(
            "the request&#39;s origin is hidden (Origin: null) and it has no Sec-Fetch-Site"))
        XCTAssertTrue(refusal(console.post("/jobs/nightly/fire", cookie: cookie, form: [("csrf", csrf)],
                                           headers: [("Origin", "null"), ("Sec-Fetch-Site", "cross-site")])).contains(
            "the request came from another site (Sec-Fetch-Site: cross-site)"))
        // Right token, right origin, but nobody signed in: refused for that reason.
        let anonymous = console.post("/jobs/nightly/fire", cookie: cookie, form: [("csrf", csrf)])
        XCTAssertEqual(anonymous.status, 403)
        XCTAssertTrue(ConsoleFixture.text(anonymous).contains("Firing a job needs a signed-in Hub user"))
        let hiddenOrigin = console.post("/jobs/nightly/fire", cookie: cookie, form: [("csrf", csrf)],
                                        headers: [("Origin", "null"), ("Sec-Fetch-Site", "same-origin")])
        XCTAssertTrue(ConsoleFixture.text(hiddenOrigin).contains("Firing a job needs a signed-in Hub user"), ConsoleFixture.text(hiddenOrigin))
        XCTAssertEqual(console.actions?.fireCount, 0)
        // The token of another session does not pass.
        let other = try console.signInWithToken()
        let otherCSRF = try XCTUnwrap(ConsoleFixture.csrf(console.get("/jobs/nightly", cookie: other)))
        XCTAssertNotEqual(otherCSRF, csrf)
        XCTAssertTrue(refusal(console.post("/jobs/nightly/fire", cookie: cookie, form: [("csrf", otherCSRF)])).contains("CSRF token"))
    }

    func testSignInWithMFAThenFireNowChecksPermissions() throws {
        let actions = try StubActions(needs: ["users.manage"])
        let console = try ConsoleFixture(actions: actions, jobs: [try ConsoleFixture.job()])
        let cookie = try console.signInWithToken()
        let csrf = try XCTUnwrap(ConsoleFixture.csrf(console.get("/signin", cookie: cookie)))

        // MFA account without a code: asked for it; the session stays signed out.
        let askCode = console.post("/signin", cookie: cookie, form: [("csrf", csrf), ("email", "admin@example.com"), ("password", "pw")])
        XCTAssertEqual(askCode.status, 401)
        XCTAssertTrue(ConsoleFixture.text(askCode).contains("This account uses MFA: enter your password and the current code."))

        let signedIn = console.post("/signin", cookie: cookie, form: [("csrf", csrf), ("email", "admin@example.com"),
                                                                      ("password", "pw"), ("mfa_code", "123456")])
        XCTAssertEqual(signedIn.status, 303)
        XCTAssertEqual(signedIn.headers["Location"], "/jobs")
        let personCookie = try XCTUnwrap(ConsoleFixture.cookie(signedIn))
        XCTAssertNotEqual(personCookie, cookie, "signing in makes a new session id")
        XCTAssertEqual(console.get("/runs", cookie: cookie).status, 401, "the old id is gone")
        let jobPage = console.get("/jobs/nightly", cookie: personCookie)
        XCTAssertTrue(ConsoleFixture.text(jobPage).contains("Signed in as <span id=\"who-email\"><bdi>admin@example.com</bdi></span>"))
        let personCSRF = try XCTUnwrap(ConsoleFixture.csrf(jobPage))
        XCTAssertNotEqual(personCSRF, csrf)

        let fired = console.post("/jobs/nightly/fire", cookie: personCookie, form: [("csrf", personCSRF)])
        XCTAssertEqual(fired.status, 303)
        XCTAssertEqual(fired.headers["Location"], "/jobs/nightly?fired=nightly%40manual-2026-11-30T14%3A22%3A33Z")
        XCTAssertEqual(actions.fired.map(\.person), ["admin@example.com"])
        let notice = ConsoleFixture.text(console.get(try XCTUnwrap(fired.headers["Location"]), cookie: personCookie))
        XCTAssertTrue(notice.contains("Fired: <a id=\"fired-run\" href=\"/runs/nightly%40manual-2026-11-30T14%3A22%3A33Z\">"), notice)
    }

    func testFireNowRefusesAUserWithoutThePermissions() throws {
        let actions = try StubActions(needs: ["users.list", "users.manage"])
        let console = try ConsoleFixture(actions: actions, jobs: [try ConsoleFixture.job()])
        let cookie = try console.signInWithToken()
        let csrf = try XCTUnwrap(ConsoleFixture.csrf(console.get("/signin", cookie: cookie)))
        let signedIn = console.post("/signin", cookie: cookie, form: [("csrf", csrf), ("email", "support@example.com"), ("password", "pw")])
        XCTAssertEqual(signedIn.status, 303)
        let personCookie = try XCTUnwrap(ConsoleFixture.cookie(signedIn))
        let personCSRF = try XCTUnwrap(ConsoleFixture.csrf(console.get("/jobs/nightly", cookie: personCookie)))
        let refused = console.post("/jobs/nightly/fire", cookie: personCookie, form: [("csrf", personCSRF)])
        XCTAssertEqual(refused.status, 403)
        XCTAssertTrue(ConsoleFixture.text(refused).contains(
            "Firing nightly needs users.list, users.manage; support@example.com lacks users.manage."), ConsoleFixture.text(refused))
        XCTAssertEqual(actions.fireCount, 0)

        // Signing out ends the identity: the next fire asks for a sign-in.
        let out = console.post("/signout", cookie: personCookie, form: [("csrf", personCSRF)])
        XCTAssertEqual(out.status, 303)
        let after = try XCTUnwrap(ConsoleFixture.cookie(out))
        let afterCSRF = try XCTUnwrap(ConsoleFixture.csrf(console.get("/jobs/nightly", cookie: after)))
        XCTAssertTrue(ConsoleFixture.text(console.post("/jobs/nightly/fire", cookie: after, form: [("csrf", afterCSRF)]))
            .contains("Firing a job needs a signed-in Hub user"))
    }

    func testAReadOnlyConsoleHasNoSignInAndNoActions() throws {
        let console = try ConsoleFixture(jobs: [try ConsoleFixture.job()])
        let cookie = try console.signInWithToken()
        let page = ConsoleFixture.text(console.get("/jobs/nightly", cookie: cookie))
        XCTAssertFalse(page.contains("id=\"fire-form\""))
        XCTAssertEqual(console.get("/signin", cookie: cookie).status, 404)
    }

    func testTokensAreRandomAndComparedWhole() {
        let a = AccessToken.make(), b = AccessToken.make()
        XCTAssertEqual(a.count, 64)
        XCTAssertNotEqual(a, b)
        XCTAssertTrue(a.allSatisfy { $0.isHexDigit && !$0.isUppercase })
        XCTAssertTrue(AccessToken.matches(a, a))
        XCTAssertFalse(AccessToken.matches(String(a.dropLast()), a))
        XCTAssertFalse(AccessToken.matches(a + "0", a))
        XCTAssertFalse(AccessToken.matches("", a))
        XCTAssertFalse(AccessToken.matches("", ""))
    }

    func testSessionsAreBoundedAndExpire() {
        final class Clock: @unchecked Sendable { var now = Date(timeIntervalSince1970: 0) }
        let clock = Clock()
        let sessions = ConsoleSessions(capacity: 2, idleLimit: 60, clock: { clock.now })
        let first = sessions.open()
        clock.now += 1
        let second = sessions.open()
        clock.now += 1
        _ = sessions.open()
        XCTAssertNil(sessions.find(first.id), "the least recently seen goes first")
        XCTAssertNotNil(sessions.find(second.id))
        clock.now += 61
        XCTAssertNil(sessions.find(second.id), "idle too long")
    }
}
