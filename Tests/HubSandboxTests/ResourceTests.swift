import XCTest
@testable import HubSandbox

/// Organizations, applications, API keys, sessions and notifications.
final class ResourceTests: XCTestCase {
    func testOrganizationsAreMembershipsUnlessManager() throws {
        let hub = try makeHub()
        let ada = hub.accessToken("ada@example.com")
        let mine = hub.call("GET", "/organizations", token: ada).json["data"]?.items ?? []
        XCTAssertEqual(mine.compactMap { $0["id"]?.string }, ["org_acme"])
        XCTAssertEqual(mine.first?["my_role"]?.string, "org_member")
        XCTAssertEqual(hub.call("GET", "/organizations").json["data"]?.items.count, 2)
        let members = hub.call("GET", "/organizations/org_acme/members?limit=100").json["data"]?.items ?? []
        XCTAssertTrue(members.contains { $0["user_id"]?.string == "usr_ada" && $0["user"]?["email"]?.string == "ada@example.com" })
        XCTAssertEqual(hub.call("DELETE", "/organizations/org_acme/members/usr_ada").status, 204)
        XCTAssertEqual(hub.call("GET", "/organizations", token: ada).json["data"]?.items.count, 0)
        XCTAssertEqual(hub.call("DELETE", "/organizations/org_nope/members/usr_ada").code, "not_found")
    }

    func testAnEncodedSlashStaysInsideItsSegment() throws {
        let hub = try makeHub()
        // Routed on segments split before decoding: `a%2Fsessions` is one id, not a path.
        let r = hub.call("GET", "/users/usr_ada%2Fsessions")
        XCTAssertEqual(r.status, 404)
        XCTAssertEqual(r.code, "not_found")
        XCTAssertEqual(r.json["error"]?["message"]?.string, "User usr_ada/sessions does not exist or is not visible to the caller.")
        XCTAssertEqual(hub.call("GET", "/users/usr_ada/sessions").status, 200)
        XCTAssertEqual(hub.call("GET", "/users/usr%5Fada").json["id"]?.string, "usr_ada")   // other escapes decode
    }

    func testApplicationsCatalog() throws {
        let hub = try makeHub()
        let apps = hub.call("GET", "/applications", token: SandboxFixtures.adaKeySecret).json["data"]?.items ?? []
        XCTAssertEqual(Set(apps.compactMap { $0["id"]?.string }), Set(SandboxFixtures.applicationIds))
        XCTAssertEqual(apps.first { $0["id"]?.string == "app_hub" }?["visibility"]?.string, "internal")
        XCTAssertEqual(hub.call("GET", "/applications?owned=true").json["data"]?.items.count, 0)
    }

    func testApiKeysHideRevokedAndNeverShowSecrets() throws {
        let hub = try makeHub()
        let r = hub.call("GET", "/api-keys?limit=100")
        XCTAssertFalse(r.text.contains("satk_test_jobs_sandbox_0000000000000000"))
        XCTAssertTrue(r.json["data"]?.items.allSatisfy { $0["status"]?.string == "active" } ?? false)
        XCTAssertEqual(hub.call("DELETE", "/api-keys/key_ada_cli").status, 204)
        XCTAssertEqual(hub.call("GET", "/users", token: SandboxFixtures.adaKeySecret).code, "unauthenticated")
        XCTAssertEqual(hub.call("GET", "/api-keys?owner_user_id=usr_ada").json["data"]?.items.count, 0)
        XCTAssertEqual(hub.call("GET", "/api-keys?owner_user_id=usr_ada&include_inactive=true").json["data"]?.items.count, 1)
    }

    func testAKeyReadsItsOwnRecordOnly() throws {
        let hub = try makeHub()
        let own = hub.call("GET", "/api-keys/key_support_ro", token: SandboxFixtures.supportKeySecret)
        XCTAssertEqual(own.status, 200)
        XCTAssertEqual(own.json["permissions"], .array([.string("users.list"), .string("audit.view")]))
        XCTAssertEqual(own.headers["ETag"], "W/\"1\"")
        XCTAssertEqual(hub.call("GET", "/api-keys/key_jobs", token: SandboxFixtures.supportKeySecret).code, "forbidden")
        XCTAssertEqual(hub.call("GET", "/api-keys/key_support_ro").json["id"]?.string, "key_support_ro")
    }

    func testSessionsMarkTheCurrentOne() throws {
        let hub = try makeHub()
        let login = hub.login("ada@example.com")
        let token = login["access_token"]?.string
        let sessions = hub.call("GET", "/users/me/sessions", token: token).json["data"]?.items ?? []
        XCTAssertEqual(sessions.count, 3)
        XCTAssertEqual(sessions.filter { $0["current"] == .bool(true) }.compactMap { $0["id"]?.string }, [login["session_id"]?.string ?? "?"])
        XCTAssertEqual(hub.call("DELETE", "/users/usr_ada/sessions/\(login["session_id"]?.string ?? "")").status, 204)
        XCTAssertEqual(hub.call("GET", "/users/me", token: token).code, "session_revoked")
        XCTAssertEqual(hub.call("DELETE", "/users/usr_support/sessions/ses_ada_phone").code, "not_found")
    }

    func testNotificationsReachTheInbox() throws {
        let hub = try makeHub(rateLimits: .standard)
        let send = hub.call("POST", "/applications/app_wiki/notifications",
                            body: #"{"user_id":"usr_ada","title":"Page shared","body":"Read it","category":"wiki.share"}"#)
        XCTAssertEqual(send.status, 201)
        let ada = hub.accessToken("ada@example.com")
        let inbox = hub.call("GET", "/users/me/notifications", token: ada).json["data"]?.items ?? []
        XCTAssertEqual(inbox.first?["id"], send.json["id"])
        XCTAssertEqual(inbox.count, 3)
        XCTAssertEqual(hub.call("GET", "/users/me/notifications?category=security.", token: ada).json["data"]?.items.count, 1)
        XCTAssertEqual(hub.call("GET", "/users/me/notifications").code, "user_token_required")
        let bad = hub.call("POST", "/applications/app_wiki/notifications", body: #"{"user_id":"usr_nope","title":"","body":"x"}"#)
        XCTAssertEqual(bad.json["error"]?["details"]?["fields"]?.items.compactMap { $0["field"]?.string }, ["user_id", "title", "category"])
        XCTAssertEqual(hub.call("POST", "/applications/app_nope/notifications", body: "{}").code, "not_found")
        XCTAssertEqual(hub.call("POST", "/applications/app_wiki/notifications", token: ada, body: "{}").code, "forbidden")
    }

    func testSixtyNotificationsPerRecipientPerAppPerHour() throws {
        let hub = try makeHub(clock: ManualClock(), rateLimits: .standard)
        let body = #"{"user_id":"usr_ada","title":"t","body":"b","category":"c"}"#
        for _ in 0..<60 { XCTAssertEqual(hub.call("POST", "/applications/app_chat/notifications", token: SandboxFixtures.jobsKeySecret, body: body).status, 201) }
        let r = hub.call("POST", "/applications/app_chat/notifications", token: SandboxFixtures.opsKeySecret, body: body)
        XCTAssertEqual(r.code, "forbidden")
        let limited = hub.call("POST", "/applications/app_chat/notifications", token: SandboxFixtures.jobsKeySecret, body: body)
        XCTAssertEqual(limited.code, "rate_limited")
        XCTAssertEqual(limited.headers["Retry-After"], "60")
    }
}
