import XCTest
@testable import HubSandbox

/// Login, MFA, refresh rotation and reuse, expiry by the clock, logout, API keys, `me`.
final class AuthTests: XCTestCase {
    func testLoginWithoutMFAGivesTokens() throws {
        let hub = try makeHub()
        let r = hub.call("POST", "/auth/login", token: nil, body: #"{"email":"ada@example.com","password":"anything"}"#)
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(r.json["expires_in"]?.int, 900)
        XCTAssertEqual(r.json["user_id"]?.string, "usr_ada")
        let me = hub.call("GET", "/users/me", token: r.json["access_token"]?.string)
        XCTAssertEqual(me.json["id"]?.string, "usr_ada")
    }

    func testAdminNeedsMFA() throws {
        let hub = try makeHub()
        let r = hub.call("POST", "/auth/login", token: nil, body: #"{"email":"admin@example.com","password":"pw"}"#)
        XCTAssertEqual(r.json["mfa_required"], .bool(true))
        let mfa = try XCTUnwrap(r.json["mfa_token"]?.string)
        let wrong = hub.call("POST", "/auth/mfa/verify", token: nil, body: #"{"mfa_token":"\#(mfa)","code":"000000"}"#)
        XCTAssertEqual(wrong.status, 422)
        let ok = hub.call("POST", "/auth/mfa/verify", token: nil, body: #"{"mfa_token":"\#(mfa)","code":"123456"}"#)
        XCTAssertEqual(ok.status, 200)
        XCTAssertEqual(hub.call("GET", "/users/me", token: ok.json["access_token"]?.string).json["id"]?.string, "usr_admin")
    }

    func testUnknownEmailIsUnauthenticated() throws {
        let hub = try makeHub()
        let r = hub.call("POST", "/auth/login", token: nil, body: #"{"email":"nobody@example.com","password":"x"}"#)
        XCTAssertEqual(r.status, 401)
        XCTAssertEqual(r.code, "unauthenticated")
    }

    func testRefreshRotatesAndReuseRevokesSession() throws {
        let hub = try makeHub()
        let t = hub.login("ada@example.com")
        let old = try XCTUnwrap(t["refresh_token"]?.string)
        let r1 = hub.call("POST", "/auth/token/refresh", token: nil, body: #"{"refresh_token":"\#(old)"}"#)
        XCTAssertEqual(r1.status, 200)
        let newAccess = try XCTUnwrap(r1.json["access_token"]?.string)
        XCTAssertNotEqual(r1.json["refresh_token"]?.string, old)
        XCTAssertEqual(hub.call("GET", "/users/me", token: newAccess).status, 200)
        let reuse = hub.call("POST", "/auth/token/refresh", token: nil, body: #"{"refresh_token":"\#(old)"}"#)
        XCTAssertEqual(reuse.status, 401)
        XCTAssertEqual(reuse.code, "refresh_token_reused")
        let after = hub.call("GET", "/users/me", token: newAccess)
        XCTAssertEqual(after.status, 401)
        XCTAssertEqual(after.code, "session_revoked")
        let fresh = hub.call("POST", "/auth/token/refresh", token: nil, body: #"{"refresh_token":"\#(r1.json["refresh_token"]?.string ?? "")"}"#)
        XCTAssertEqual(fresh.code, "session_revoked")
    }

    func testAccessTokenExpiresAfter15MinutesByTheClock() throws {
        let clock = ManualClock()
        let hub = try makeHub(clock: clock)
        let token = hub.accessToken("ada@example.com")
        clock.advance(by: 899)
        XCTAssertEqual(hub.call("GET", "/users/me", token: token).status, 200)
        clock.advance(by: 1)
        let r = hub.call("GET", "/users/me", token: token)
        XCTAssertEqual(r.status, 401)
        XCTAssertEqual(r.code, "unauthenticated")
    }

    func testMissingAndUnknownTokens() throws {
        let hub = try makeHub()
        XCTAssertEqual(hub.call("GET", "/users", token: nil).code, "unauthenticated")
        XCTAssertEqual(hub.call("GET", "/users", token: "sat_nope").code, "unauthenticated")
        XCTAssertEqual(hub.call("GET", "/users", token: "satk_test_nope").code, "unauthenticated")
    }

    func testMeWithAnAPIKeyNeedsAUserToken() throws {
        let hub = try makeHub()
        let r = hub.call("GET", "/users/me")
        XCTAssertEqual(r.status, 400)
        XCTAssertEqual(r.code, "user_token_required")
        XCTAssertEqual(hub.call("GET", "/users/me/roles").code, "user_token_required")
    }

    func testLogoutRevokesTheSession() throws {
        let hub = try makeHub()
        let token = hub.accessToken("ada@example.com")
        XCTAssertEqual(hub.call("POST", "/auth/logout", token: token, body: "{}").status, 204)
        XCTAssertEqual(hub.call("GET", "/users/me", token: token).code, "session_revoked")
    }

    func testVersionHeaderIsRequired() throws {
        let hub = try makeHub()
        XCTAssertEqual(hub.call("GET", "/users", version: nil).code, "unsupported_api_version")
        XCTAssertEqual(hub.call("GET", "/users", version: "2").status, 400)
    }

    func testV1PrefixOnlyWhenConfigured() throws {
        let hub = try makeHub()
        XCTAssertEqual(hub.call("GET", "/v1/users").status, 404)
        let prefixed = try HubSandbox(options: SandboxOptions(scale: .init(users: 10, auditEvents: 10), apiPrefix: "/v1"))
        XCTAssertEqual(prefixed.call("GET", "/v1/users").status, 200)
        XCTAssertEqual(prefixed.call("GET", "/users").status, 200)
    }

    func testRequestIdIsEchoedAndRateLimitHeadersAreSent() throws {
        let hub = try makeHub(rateLimits: .standard)
        let r = hub.call("GET", "/users/usr_ada", headers: [("X-Request-Id", "abc-123")])
        XCTAssertEqual(r.headers["X-Request-Id"], "abc-123")
        XCTAssertEqual(r.headers["RateLimit-Limit"], "100")
        XCTAssertEqual(r.headers["RateLimit-Remaining"], "99")
        XCTAssertNotNil(hub.call("GET", "/nope").headers["X-Request-Id"])
    }
}
