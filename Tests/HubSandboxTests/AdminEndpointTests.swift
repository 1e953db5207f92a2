import Foundation
import XCTest
@testable import HubSandbox

/// The admin endpoints of docs/hub-api.md, "The rest of the admin API": one rule per assertion,
/// with the exact error code (and fields) the sandbox answers.
final class AdminEndpointTests: XCTestCase {
    private func events(_ hub: HubSandbox, _ action: String, target: String? = nil) -> [JSON] {
        var q = "/audit-events?action=\(action)&limit=100"
        if let target { q += "&target_id=\(target)" }
        return hub.call("GET", q).json["data"]?.items ?? []
    }

    private func fields(_ r: Resp) -> [String] {
        (r.json["error"]?["details"]?["fields"]?.items ?? []).map { "\($0["field"]?.string ?? "?"):\($0["code"]?.string ?? "?")" }
    }

    // MARK: Users

    func testCreateInviteResendDelete() throws {
        let hub = try makeHub()
        let created = hub.call("POST", "/users", body: #"{"email":"New.Person@Example.com","display_name":"New Person"}"#)
        XCTAssertEqual(created.status, 201, created.text)
        let id = try XCTUnwrap(created.json["id"]?.string)
        XCTAssertEqual(created.json["email"]?.string, "new.person@example.com")
        XCTAssertEqual(created.json["status"]?.string, "invited")
        XCTAssertEqual(created.headers["Location"], "/users/\(id)")
        XCTAssertEqual(events(hub, "user.created", target: id).count, 1)
        let taken = hub.call("POST", "/users", body: #"{"email":"new.person@example.com"}"#)
        XCTAssertEqual(taken.status, 409)
        XCTAssertEqual(taken.code, "email_taken")
        XCTAssertEqual(taken.json["error"]?["details"]?["existing_user_id"]?.string, id)

        XCTAssertEqual(hub.call("POST", "/users/\(id)/invitation").status, 202)
        XCTAssertEqual(events(hub, "user.invitation_resent", target: id).count, 1)
        let notInvited = hub.call("POST", "/users/usr_ada/invitation")
        XCTAssertEqual(notInvited.status, 409)
        XCTAssertEqual(notInvited.code, "invalid_status_transition")

        XCTAssertEqual(hub.call("DELETE", "/users/usr_ada", headers: [("If-Match", "W/\"99\"")]).code, "version_conflict")
        let deleted = hub.call("DELETE", "/users/usr_ada")
        XCTAssertEqual(deleted.status, 204, deleted.text)
        XCTAssertEqual(hub.call("GET", "/users/usr_ada").status, 404)
        XCTAssertEqual(hub.call("DELETE", "/users/usr_ada").status, 404)
        XCTAssertEqual(hub.call("GET", "/users/usr_ada/sessions").json["data"]?.items.count, 0)
        let event = try XCTUnwrap(events(hub, "user.deleted", target: "usr_ada").first)
        XCTAssertEqual(event["after"]?["sessions_revoked"]?.int, 2)
        XCTAssertEqual(hub.call("GET", "/users?status=deleted&email=ada@example.com").json["data"]?.items.count, 1)
    }

    func testCreateUserValidationAndPermissions() throws {
        let hub = try makeHub()
        let bad = hub.call("POST", "/users", body: #"{"email":"not-an-email","status":"suspended","send_invitation":"yes"}"#)
        XCTAssertEqual(bad.status, 422)
        XCTAssertEqual(bad.code, "validation_failed")
        XCTAssertEqual(fields(bad), ["email:invalid_format", "status:invalid", "send_invitation:invalid"])
        XCTAssertEqual(fields(hub.call("POST", "/users", body: #"{}"#)), ["email:required"])
        let nul = hub.call("POST", "/users", body: #"{"email":"a@b.co","display_name":"x\u0000y"}"#)
        XCTAssertEqual(fields(nul), ["display_name:invalid"])
        let denied = hub.call("POST", "/users", token: SandboxFixtures.supportKeySecret, body: #"{"email":"s@example.com"}"#)
        XCTAssertEqual(denied.status, 403)
        XCTAssertEqual(denied.json["error"]?["details"]?["required_permission"]?.string, "users.manage")
        let active = hub.call("POST", "/users", body: #"{"email":"act@example.com","status":"active"}"#)
        XCTAssertEqual(active.json["status"]?.string, "active")
        XCTAssertEqual(hub.call("POST", "/users/\(active.json["id"]?.string ?? "")/invitation").code, "invalid_status_transition")
    }

    func testCreateUserIdempotencyReplayAndConflict() throws {
        let hub = try makeHub()
        let body = #"{"email":"once@example.com"}"#
        let first = hub.call("POST", "/users", body: body, headers: [("Idempotency-Key", "k1")])
        let again = hub.call("POST", "/users", body: body, headers: [("Idempotency-Key", "k1")])
        XCTAssertEqual(first.status, 201)
        XCTAssertEqual(again.status, 201)
        XCTAssertEqual(again.headers["Idempotent-Replayed"], "true")
        XCTAssertEqual(again.json["id"], first.json["id"])
        XCTAssertEqual(events(hub, "user.created").count, 1)
        XCTAssertEqual(hub.call("POST", "/users", body: #"{"email":"other@example.com"}"#, headers: [("Idempotency-Key", "k1")]).code,
                       "idempotency_key_reused")
    }

    func testUserCreationHasItsOwnRateClass() throws {
        let hub = try makeHub(rateLimits: .standard)
        for n in 0..<20 { XCTAssertEqual(hub.call("POST", "/users", body: #"{"email":"u\#(n)@example.com"}"#).status, 201) }
        let limited = hub.call("POST", "/users", body: #"{"email":"u20@example.com"}"#)
        XCTAssertEqual(limited.status, 429)
        XCTAssertEqual(limited.code, "rate_limited")
        XCTAssertEqual(hub.call("GET", "/users/usr_ada").status, 200)
    }

    func testExportBundleHoldsNoSecret() throws {
        let hub = try makeHub()
        let r = hub.call("GET", "/users/usr_ada/export")
        XCTAssertEqual(r.status, 200, r.text)
        XCTAssertEqual(r.json.objectKeys, ["exported_at", "user", "profile", "settings", "identities", "sessions", "organizations",
                                           "roles", "applications", "audit_events"])
        XCTAssertEqual(r.json["user"]?["id"]?.string, "usr_ada")
        XCTAssertEqual(r.json["sessions"]?.items.count, 3)
        XCTAssertFalse(r.text.contains(SandboxFixtures.adaKeySecret))
        XCTAssertFalse(r.text.contains("satk_"))
        XCTAssertEqual(hub.call("GET", "/users/usr_ada/export", token: SandboxFixtures.supportKeySecret).code, "forbidden")
        let own = hub.call("GET", "/users/me/export", token: hub.accessToken("ada@example.com"))
        XCTAssertEqual(own.json["user"]?["id"]?.string, "usr_ada")
    }

    // MARK: API keys

    func testApiKeyCreateRotateUpdate() throws {
        let hub = try makeHub()
        let admin = hub.accessToken("admin@example.com")
        let body = #"{"name":"ci","scope":"platform","permissions":["users.list","audit.view"],"mode":"test"}"#
        let byKey = hub.call("POST", "/api-keys", body: body)
        XCTAssertEqual(byKey.status, 400)
        XCTAssertEqual(byKey.code, "user_token_required")
        let created = hub.call("POST", "/api-keys", token: admin, body: body)
        XCTAssertEqual(created.status, 201, created.text)
        let id = try XCTUnwrap(created.json["id"]?.string)
        let secret = try XCTUnwrap(created.json["secret"]?.string)
        XCTAssertTrue(secret.hasPrefix("satk_test_"))
        XCTAssertEqual(created.json["intended_use"]?.string, "service")
        XCTAssertEqual(hub.call("GET", "/users/usr_ada", token: secret).status, 200)
        XCTAssertFalse(hub.call("GET", "/api-keys/\(id)").text.contains(secret))
        XCTAssertFalse(events(hub, "api_key.created", target: id).description.contains(secret))

        let rotated = hub.call("POST", "/api-keys/\(id)/rotate", token: admin)
        XCTAssertEqual(rotated.status, 200, rotated.text)
        let next = try XCTUnwrap(rotated.json["secret"]?.string)
        XCTAssertNotEqual(next, secret)
        XCTAssertEqual(hub.call("GET", "/users/usr_ada", token: secret).status, 401)
        XCTAssertEqual(hub.call("GET", "/users/usr_ada", token: next).status, 200)
        XCTAssertEqual(events(hub, "api_key.rotated", target: id).count, 1)

        let renamed = hub.call("PATCH", "/api-keys/\(id)", token: admin, body: #"{"name":"ci-2","permissions":["users.list"]}"#)
        XCTAssertEqual(renamed.status, 200, renamed.text)
        XCTAssertEqual(renamed.json["permissions"]?.items.compactMap(\.string), ["users.list"])
        XCTAssertEqual(hub.call("PATCH", "/api-keys/\(id)", token: admin, body: #"{"mode":"live"}"#).code, "read_only_field")
        XCTAssertEqual(hub.call("PATCH", "/api-keys/\(id)", token: admin, body: #"{"name":"x"}"#,
                                headers: [("If-Match", "W/\"1\"")]).code, "version_conflict")
        XCTAssertEqual(events(hub, "api_key.updated", target: id).count, 1)
        XCTAssertEqual(hub.call("DELETE", "/api-keys/\(id)").status, 204)
        XCTAssertEqual(hub.call("POST", "/api-keys/\(id)/rotate", token: admin).code, "invalid_status_transition")
    }

    func testApiKeyRulesAndReplay() throws {
        let hub = try makeHub()
        let admin = hub.accessToken("admin@example.com")
        let unknown = hub.call("POST", "/api-keys", token: admin,
                               body: #"{"name":"x","scope":"platform","permissions":["users.fly"],"mode":"test"}"#)
        XCTAssertEqual(unknown.status, 422)
        XCTAssertEqual(unknown.code, "unknown_permission")
        XCTAssertEqual(hub.call("POST", "/api-keys", token: admin,
                                body: #"{"name":"x","scope":"app_wiki","permissions":["users.manage"],"mode":"test"}"#).code,
                       "permission_not_grantable_to_scope")
        XCTAssertEqual(fields(hub.call("POST", "/api-keys", token: admin, body: #"{"scope":"nowhere","mode":"prod"}"#)),
                       ["name:required", "scope:invalid", "mode:invalid"])
        // A user with api_keys.manage but not billing.manage cannot mint a billing key.
        let role = hub.call("POST", "/roles", body: #"{"name":"key_admin","scope":"platform","permissions":["api_keys.manage","users.list"]}"#)
        XCTAssertEqual(role.status, 201, role.text)
        let user = hub.call("POST", "/users", body: #"{"email":"keys@example.com","status":"active"}"#).json["id"]?.string ?? ""
        XCTAssertEqual(hub.call("POST", "/users/\(user)/roles/role_platform_key_admin").status, 201)
        let escalation = hub.call("POST", "/api-keys", token: hub.accessToken("keys@example.com"),
                                  body: #"{"name":"x","scope":"platform","permissions":["billing.manage"],"mode":"test"}"#)
        XCTAssertEqual(escalation.status, 403)
        XCTAssertEqual(escalation.code, "role_escalation_forbidden")

        let body = #"{"name":"replayed","scope":"platform","permissions":["users.list"],"mode":"live"}"#
        let first = hub.call("POST", "/api-keys", token: admin, body: body, headers: [("Idempotency-Key", "key-1")])
        let again = hub.call("POST", "/api-keys", token: admin, body: body, headers: [("Idempotency-Key", "key-1")])
        XCTAssertEqual(again.headers["Idempotent-Replayed"], "true")
        XCTAssertEqual(again.json["secret"], first.json["secret"])
        XCTAssertEqual(events(hub, "api_key.created").count, 1)
    }

    // MARK: Roles

    func testRoleCreateUpdateDelete() throws {
        let hub = try makeHub()
        let created = hub.call("POST", "/roles", body: #"{"name":"auditor","scope":"platform","permissions":["audit.view"],"description":"Reads the log"}"#)
        XCTAssertEqual(created.status, 201, created.text)
        XCTAssertEqual(created.json["id"]?.string, "role_platform_auditor")
        XCTAssertEqual(created.json["seed"]?.boolValue, false)
        XCTAssertEqual(hub.call("POST", "/roles", body: #"{"name":"auditor","scope":"platform","permissions":[]}"#).code, "role_name_taken")
        XCTAssertEqual(fields(hub.call("POST", "/roles", body: #"{"name":"Bad Name","scope":"app_wiki"}"#)),
                       ["name:invalid_format", "scope:unsupported", "permissions:required"])
        XCTAssertEqual(hub.call("POST", "/roles", body: #"{"name":"x1","scope":"platform","permissions":["nope"]}"#).code, "unknown_permission")
        XCTAssertEqual(hub.call("POST", "/roles", token: SandboxFixtures.supportKeySecret,
                                body: #"{"name":"x2","scope":"platform","permissions":[]}"#).code, "forbidden")

        let updated = hub.call("PATCH", "/roles/role_platform_auditor", body: #"{"permissions":["audit.view","users.list"]}"#,
                               headers: [("If-Match", "W/\"1\"")])
        XCTAssertEqual(updated.status, 200, updated.text)
        XCTAssertEqual(updated.headers["ETag"], "W/\"2\"")
        XCTAssertEqual(hub.call("PATCH", "/roles/role_platform_auditor", body: #"{"description":"x"}"#,
                                headers: [("If-Match", "W/\"1\"")]).code, "version_conflict")
        XCTAssertEqual(hub.call("PATCH", "/roles/role_platform_auditor", body: #"{"name":"y"}"#).code, "read_only_field")
        XCTAssertEqual(hub.call("PATCH", "/roles/role_support", body: #"{"permissions":[]}"#).code, "seed_role_immutable")
        XCTAssertEqual(hub.call("DELETE", "/roles/role_member").code, "seed_role_immutable")

        XCTAssertEqual(hub.call("POST", "/users/usr_ada/roles/role_platform_auditor").status, 201)
        let inUse = hub.call("DELETE", "/roles/role_platform_auditor")
        XCTAssertEqual(inUse.status, 409)
        XCTAssertEqual(inUse.code, "role_in_use")
        XCTAssertEqual(hub.call("DELETE", "/users/usr_ada/roles/role_platform_auditor").status, 204)
        XCTAssertEqual(hub.call("DELETE", "/roles/role_platform_auditor").status, 204)
        XCTAssertEqual(hub.call("GET", "/roles/role_platform_auditor").status, 404)
        for action in ["role.created", "role.updated", "role.deleted"] {
            XCTAssertEqual(events(hub, action, target: "role_platform_auditor").count, 1, action)
        }
    }

    func testEffectivePermissions() throws {
        let hub = try makeHub()
        let wiki = hub.call("GET", "/users/usr_ada/apps/app_wiki/effective-permissions", token: SandboxFixtures.supportKeySecret)
        XCTAssertEqual(wiki.status, 200, wiki.text)
        XCTAssertEqual(wiki.json["allowed"]?.boolValue, true)
        XCTAssertEqual(wiki.json["entitlement_status"]?.string, "active")
        XCTAssertEqual(wiki.json["roles"]?.items.compactMap(\.string), ["role_billing_admin", "role_member"])
        let crm = hub.call("GET", "/users/usr_ada/apps/app_crm/effective-permissions")
        XCTAssertEqual(crm.json["allowed"]?.boolValue, false)
        XCTAssertEqual(crm.json["entitlement_status"]?.string, "disabled")
        XCTAssertEqual(hub.call("GET", "/users/usr_ada/apps/app_chat/effective-permissions").json["entitlement_status"]?.string, "none")
        XCTAssertEqual(hub.call("GET", "/users/usr_ada/apps/app_nope/effective-permissions").status, 404)
        XCTAssertEqual(hub.call("POST", "/users/usr_ada/suspend", body: "{}").status, 200)
        let suspended = hub.call("GET", "/users/usr_ada/apps/app_wiki/effective-permissions")
        XCTAssertEqual(suspended.json["allowed"]?.boolValue, false)
        XCTAssertEqual(suspended.json["user_status"]?.string, "suspended")
    }

    // MARK: Inbox

    func testInboxMarkRead() throws {
        let hub = try makeHub()
        let ada = hub.accessToken("ada@example.com")
        let items = hub.call("GET", "/users/me/notifications", token: ada).json["data"]?.items ?? []
        XCTAssertEqual(items.map { $0["state"]?.string }, ["unread", "unread"])
        let read = hub.call("PATCH", "/users/me/notifications/ntf_ada_signin", token: ada, body: #"{"state":"read"}"#)
        XCTAssertEqual(read.status, 200, read.text)
        XCTAssertEqual(read.json["state"]?.string, "read")
        XCTAssertEqual(read.json["source"]?.string, "platform")
        XCTAssertEqual(hub.call("GET", "/users/me/notifications?state=read", token: ada).json["data"]?.items.count, 1)
        XCTAssertEqual(hub.call("PATCH", "/users/me/notifications/ntf_ada_welcome", token: ada, body: #"{"state":"archived"}"#).status, 200)
        XCTAssertEqual(hub.call("GET", "/users/me/notifications", token: ada).json["data"]?.items.count, 1)
        XCTAssertEqual(fields(hub.call("PATCH", "/users/me/notifications/ntf_ada_signin", token: ada, body: #"{"state":"gone"}"#)),
                       ["state:invalid"])
        XCTAssertEqual(hub.call("PATCH", "/users/me/notifications/ntf_ada_signin", token: ada, body: #"{"title":"x"}"#).code, "read_only_field")
        XCTAssertEqual(hub.call("PATCH", "/users/me/notifications/ntf_ada_signin", body: #"{"state":"read"}"#).code, "user_token_required")
        XCTAssertEqual(hub.call("PATCH", "/users/me/notifications/ntf_ada_signin", token: hub.accessToken("support@example.com"),
                                body: #"{"state":"read"}"#).status, 404)
    }
}
