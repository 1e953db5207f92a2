import XCTest
@testable import HubSandbox

/// Token buckets on a manual clock: 100/min per caller, 20/min on grants, 30/min on refresh.
final class RateLimitTests: XCTestCase {
    func testPerCallerBucketRefills() throws {
        let clock = ManualClock()
        let hub = try makeHub(clock: clock, rateLimits: .standard)
        for i in 0..<100 {
            let r = hub.call("GET", "/users/usr_ada")
            XCTAssertEqual(r.status, 200)
            XCTAssertEqual(r.headers["RateLimit-Remaining"], String(99 - i))
        }
        let limited = hub.call("GET", "/users/usr_ada")
        XCTAssertEqual(limited.status, 429)
        XCTAssertEqual(limited.code, "rate_limited")
        XCTAssertEqual(limited.headers["Retry-After"], "1")
        XCTAssertEqual(limited.headers["RateLimit-Remaining"], "0")
        XCTAssertEqual(limited.headers["RateLimit-Reset"], "60")
        // Another caller has its own bucket.
        XCTAssertEqual(hub.call("GET", "/users/usr_ada", token: SandboxFixtures.opsKeySecret).status, 200)
        clock.advance(by: 1)  // honour Retry-After
        XCTAssertEqual(hub.call("GET", "/users/usr_ada").status, 200)
        XCTAssertEqual(hub.call("GET", "/users/usr_ada").status, 429)
        clock.advance(by: 60)
        XCTAssertEqual(hub.call("GET", "/users/usr_ada").headers["RateLimit-Remaining"], "99")
    }

    func testGrantBucketIs20PerMinute() throws {
        let clock = ManualClock()
        let hub = try makeHub(clock: clock, rateLimits: .standard)
        for i in 0..<20 {
            let r = hub.call("POST", "/users/usr_ada/entitlements", body: #"{"application_id":"app_crm","source":"trial"}"#,
                             headers: [("Idempotency-Key", "g\(i)")])
            XCTAssertEqual(r.code, "entitlement_already_exists")
        }
        let r = hub.call("POST", "/users/usr_ada/entitlements", body: #"{"application_id":"app_crm","source":"trial"}"#,
                         headers: [("Idempotency-Key", "g20")])
        XCTAssertEqual(r.status, 429)
        XCTAssertEqual(r.headers["Retry-After"], "3")
        // A replay of an earlier grant is not a new grant.
        XCTAssertEqual(hub.call("POST", "/users/usr_ada/entitlements", body: #"{"application_id":"app_crm","source":"trial"}"#,
                                headers: [("Idempotency-Key", "g0")]).headers["Idempotent-Replayed"], "true")
        clock.advance(by: 3)
        XCTAssertEqual(hub.call("POST", "/users/usr_ada/entitlements", body: #"{"application_id":"app_crm","source":"trial"}"#,
                                headers: [("Idempotency-Key", "g20")]).status, 409)
    }

    func testRefreshBucketIs30PerMinute() throws {
        let hub = try makeHub(clock: ManualClock(), rateLimits: .standard)
        var refresh = hub.login("ada@example.com")["refresh_token"]?.string ?? ""
        for _ in 0..<30 {
            let r = hub.call("POST", "/auth/token/refresh", token: nil, body: #"{"refresh_token":"\#(refresh)"}"#)
            XCTAssertEqual(r.status, 200)
            refresh = r.json["refresh_token"]?.string ?? ""
        }
        let r = hub.call("POST", "/auth/token/refresh", token: nil, body: #"{"refresh_token":"\#(refresh)"}"#)
        XCTAssertEqual(r.code, "rate_limited")
        XCTAssertEqual(r.headers["Retry-After"], "2")
    }

    func testOffNeverLimits() throws {
        let hub = try makeHub(rateLimits: .off)
        for _ in 0..<150 { XCTAssertEqual(hub.call("GET", "/health", token: nil).status, 200) }
        XCTAssertEqual(hub.call("GET", "/users/usr_ada").status, 200)
    }
}
