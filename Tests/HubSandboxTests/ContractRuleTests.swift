import Foundation
import XCTest
@testable import HubSandbox

/// Contract details of the Hub (docs/hub-api.md): ids with NUL, anonymous buckets per route, the
/// reuse alert, class buckets in `RateLimit-*`, and switched-off features (501).
final class ContractRuleTests: XCTestCase {
    func testANulInAnIdIsRefused() throws {
        let hub = try makeHub()
        XCTAssertEqual(hub.call("GET", "/users/usr_admin").status, 200)
        let r = hub.call("GET", "/users/usr_admin%00zzz")
        XCTAssertEqual(r.status, 400)
        XCTAssertEqual(r.text, #"{"error":{"code":"invalid_request","message":"The id 'usr_admin%00zzz' in the path holds a control character (such as NUL); ids never do.","details":{"parameter":"path"}}}"#)
        // Not just reads: a write to such an id changes nothing.
        let w = hub.call("POST", "/users/usr_ada%00x/suspend", body: "{}", headers: [("Idempotency-Key", "nul")])
        XCTAssertEqual(w.code, "invalid_request")
        XCTAssertEqual(hub.call("GET", "/users/usr_ada").json["status"]?.string, "active")
        let q = hub.call("GET", "/users?email=ada%40example.com%00")
        XCTAssertEqual(q.status, 400)
        XCTAssertEqual(q.json["error"]?["message"]?.string, "The query parameter 'email' holds a control character (such as NUL).")
    }

    func testHealthProbesDoNotLockOutLoginOrRefresh() throws {
        let hub = try makeHub(clock: ManualClock(), rateLimits: .standard)
        for _ in 0..<100 { XCTAssertEqual(hub.call("GET", "/health", token: nil).status, 200) }
        XCTAssertEqual(hub.call("GET", "/health", token: nil).code, "rate_limited")
        let tokens = hub.login("ada@example.com")
        let refreshed = hub.call("POST", "/auth/token/refresh", token: nil,
                                 body: #"{"refresh_token":"\#(tokens["refresh_token"]?.string ?? "")"}"#)
        XCTAssertEqual(refreshed.status, 200)
        // A refresh answer describes the session's refresh bucket (30 a minute).
        XCTAssertEqual(refreshed.headers["RateLimit-Limit"], "30")
        XCTAssertEqual(refreshed.headers["RateLimit-Remaining"], "29")
        // Logins have their own 100: the 101st is refused, health stays refused.
        for _ in 0..<99 { XCTAssertEqual(hub.call("POST", "/auth/login", token: nil, body: #"{"email":"nobody@example.com","password":"x"}"#).status, 401) }
        XCTAssertEqual(hub.call("POST", "/auth/login", token: nil, body: #"{"email":"ada@example.com","password":"x"}"#).code,
                       "rate_limited")
    }

    func testRefreshTokenReuseAlertsTheUsersInbox() throws {
        let hub = try makeHub(clock: ManualClock())
        let tokens = hub.login("ada@example.com")
        let old = tokens["refresh_token"]?.string ?? ""
        XCTAssertEqual(hub.call("POST", "/auth/token/refresh", token: nil, body: #"{"refresh_token":"\#(old)"}"#).status, 200)
        let reused = hub.call("POST", "/auth/token/refresh", token: nil, body: #"{"refresh_token":"\#(old)"}"#)
        XCTAssertEqual(reused.code, "refresh_token_reused")
        let inbox = hub.call("GET", "/users/me/notifications?category=security.session_reuse_detected",
                             token: hub.accessToken("ada@example.com"))
        let items = inbox.json["data"]?.items ?? []
        XCTAssertEqual(items.count, 1, inbox.text)
        XCTAssertEqual(items.first?["application_id"]?.string, "app_hub")
        XCTAssertEqual(items.first?["title"]?.string, "Session ended for your security")
        let session = tokens["session_id"]?.string ?? ""
        XCTAssertEqual(items.first?["body"]?.string,
                       "A sign-in token was used twice, so session \(session) was signed out. If this was not you, change your password.")
        // A third presentation revokes nothing new and alerts no more.
        XCTAssertEqual(hub.call("POST", "/auth/token/refresh", token: nil, body: #"{"refresh_token":"\#(old)"}"#).code,
                       "refresh_token_reused")
        let again = hub.call("GET", "/users/me/notifications?category=security.", token: hub.accessToken("ada@example.com"))
        XCTAssertEqual(again.json["data"]?.items.filter { $0["category"]?.string == "security.session_reuse_detected" }.count, 1)
    }

    func testAGrantAnswerDescribesTheGrantBucket() throws {
        let hub = try makeHub(clock: ManualClock(), rateLimits: .standard)
        let r = hub.call("POST", "/users/usr_ada/entitlements", body: #"{"application_id":"app_chat","source":"trial"}"#,
                         headers: [("Idempotency-Key", "g")])
        XCTAssertEqual(r.status, 201)
        XCTAssertEqual(r.headers["RateLimit-Limit"], "20")
        XCTAssertEqual(r.headers["RateLimit-Remaining"], "19")
        XCTAssertEqual(hub.call("GET", "/users/usr_ada").headers["RateLimit-Remaining"], "98")
    }

    func testAnUnimplementedFeatureAnswers501() throws {
        let faults = try FaultSpec(parsing: "unimplemented=webhooks+users/me/notifications")
        XCTAssertEqual(faults.unimplemented, ["webhooks", "users/me/notifications"])
        let hub = try makeHub(faults: faults)
        for (method, target) in [("GET", "/webhooks"), ("GET", "/webhooks/whk_x"), ("POST", "/webhooks"), ("GET", "/users/me/notifications")] {
            let r = hub.call(method, target, token: method == "GET" && target.hasPrefix("/users") ? hub.accessToken("ada@example.com") : jobsKey,
                             body: method == "POST" ? "{}" : nil)
            XCTAssertEqual(r.status, 501, target)
            XCTAssertEqual(r.code, "not_implemented", target)
        }
        XCTAssertEqual(hub.call("GET", "/webhooks").json["error"]?["message"]?.string,
                       "This Hub does not offer GET webhooks (injected fault: unimplemented).")
        XCTAssertEqual(hub.call("GET", "/users/usr_ada").status, 200)
        XCTAssertThrowsError(try FaultSpec(parsing: "unimplemented=webhooks++x")) { error in
            XCTAssertEqual("\(error)", "bad fault spec: unimplemented=webhooks++x must list route patterns joined by +, such as webhooks+organizations")
        }
    }
}
