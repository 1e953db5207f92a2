import Foundation
import XCTest
@testable import HubSandbox

/// Every change of the admin endpoints writes exactly one audit event, with the
/// request's id and the caller as actor; reads and no-op writes write none.
final class AdminAuditTests: XCTestCase {
    private var n = 0

    /// Sends the request with a fresh request id; returns it and the events carrying it.
    private func step(_ hub: HubSandbox, _ method: String, _ path: String, _ body: String? = nil, token: String = jobsKey,
                      file: StaticString = #filePath, line: UInt = #line) -> (Resp, [JSON]) {
        n += 1
        let id = "req-admin-\(n)"
        let r = hub.call(method, path, token: token, body: body, headers: [("Idempotency-Key", id), ("X-Request-Id", id)])
        XCTAssertLessThan(r.status, 300, "\(method) \(path): \(r.text)", file: file, line: line)
        let events = (hub.call("GET", "/audit-events?limit=100").json["data"]?.items ?? []).filter { $0["request_id"]?.string == id }
        return (r, events)
    }

    private func one(_ result: (Resp, [JSON]), _ action: String, actor: String = "key_jobs",
                     file: StaticString = #filePath, line: UInt = #line) -> Resp {
        XCTAssertEqual(result.1.map { $0["action"]?.string ?? "?" }, [action], file: file, line: line)
        XCTAssertEqual(result.1.first?["actor"]?["id"]?.string, actor, file: file, line: line)
        return result.0
    }

    func testEachAdminChangeWritesOneEvent() throws {
        let hub = try makeHub()
        let created = one(step(hub, "POST", "/users", #"{"email":"audit@example.com"}"#), "user.created")
        let user = try XCTUnwrap(created.json["id"]?.string)
        _ = one(step(hub, "POST", "/users/\(user)/invitation"), "user.invitation_resent")
        _ = one(step(hub, "DELETE", "/users/\(user)"), "user.deleted")
        _ = one(step(hub, "POST", "/roles", #"{"name":"audited","scope":"platform","permissions":["audit.view"]}"#), "role.created")
        _ = one(step(hub, "PATCH", "/roles/role_platform_audited", #"{"description":"d"}"#), "role.updated")
        XCTAssertEqual(step(hub, "PATCH", "/roles/role_platform_audited", #"{"description":"d"}"#).1.count, 0)
        _ = one(step(hub, "DELETE", "/roles/role_platform_audited"), "role.deleted")
        let grant = one(step(hub, "POST", "/organizations/org_acme/entitlements", #"{"application_id":"app_chat"}"#), "entitlement.granted")
        let grantID = try XCTUnwrap(grant.json["id"]?.string)
        _ = one(step(hub, "PATCH", "/entitlements/\(grantID)", #"{"member_scope":"denylist","member_overrides":["usr_ada"]}"#),
                "entitlement.member_scope_changed")
        _ = one(step(hub, "PATCH", "/entitlements/ent_ada_analytics", #"{"status":"active","ends_at":null}"#), "entitlement.updated")
        let admin = hub.accessToken("admin@example.com")
        let key = one(step(hub, "POST", "/api-keys", #"{"name":"k","scope":"platform","permissions":[],"mode":"test"}"#, token: admin),
                      "api_key.created", actor: "usr_admin")
        let keyID = try XCTUnwrap(key.json["id"]?.string)
        _ = one(step(hub, "POST", "/api-keys/\(keyID)/rotate", token: admin), "api_key.rotated", actor: "usr_admin")
        _ = one(step(hub, "PATCH", "/api-keys/\(keyID)", #"{"name":"k2"}"#, token: admin), "api_key.updated", actor: "usr_admin")
        XCTAssertEqual(step(hub, "PATCH", "/api-keys/\(keyID)", #"{"name":"k2"}"#, token: admin).1.count, 0)
        // Reads and the user's own inbox state write none.
        XCTAssertEqual(step(hub, "GET", "/users/usr_ada/export").1.count, 0)
        XCTAssertEqual(step(hub, "GET", "/users/usr_ada/apps/app_wiki/effective-permissions").1.count, 0)
        XCTAssertEqual(step(hub, "PATCH", "/users/me/notifications/ntf_ada_signin", #"{"state":"read"}"#,
                            token: hub.accessToken("ada@example.com")).1.count, 0)
    }

    func testEachNewEndpointNamesThePermissionItNeeds() throws {
        let hub = try makeHub()
        let support = SandboxFixtures.supportKeySecret   // users.list, audit.view
        let cases: [(String, String, String?, String)] = [
            ("POST", "/users", #"{"email":"x@example.com"}"#, "users.manage"),
            ("POST", "/users/usr_ada/invitation", nil, "users.manage"),
            ("DELETE", "/users/usr_ada", nil, "users.manage"),
            ("GET", "/users/usr_ada/export", nil, "users.manage"),
            ("POST", "/roles", #"{"name":"x1","scope":"platform","permissions":[]}"#, "roles.manage"),
            ("GET", "/roles/role_support", nil, "roles.manage"),
            ("PATCH", "/roles/role_support", #"{"description":"x"}"#, "roles.manage"),
            ("DELETE", "/roles/role_support", nil, "roles.manage"),
            ("POST", "/organizations/org_acme/entitlements", #"{"application_id":"app_chat"}"#, "entitlements.manage"),
            ("PATCH", "/entitlements/ent_ada_wiki", #"{"ends_at":null}"#, "entitlements.manage"),
        ]
        for (method, path, body, permission) in cases {
            let r = hub.call(method, path, token: support, body: body, headers: [("Idempotency-Key", UUID().uuidString)])
            XCTAssertEqual(r.status, 403, "\(method) \(path)")
            XCTAssertEqual(r.code, "forbidden", "\(method) \(path)")
            XCTAssertEqual(r.json["error"]?["details"]?["required_permission"]?.string, permission, "\(method) \(path)")
        }
        // A user with role_support (no api_keys.manage) may not manage keys; Ada may read her own export.
        let supportUser = hub.accessToken("support@example.com")
        for (method, path, body) in [("POST", "/api-keys", #"{"name":"x","scope":"platform","permissions":[],"mode":"test"}"#),
                                     ("POST", "/api-keys/key_ada_cli/rotate", nil), ("PATCH", "/api-keys/key_ada_cli", #"{"name":"x"}"#)] {
            let r = hub.call(method, path, token: supportUser, body: body)
            XCTAssertEqual(r.json["error"]?["details"]?["required_permission"]?.string, "api_keys.manage", "\(method) \(path)")
        }
        XCTAssertEqual(hub.call("GET", "/users/me/export", token: hub.accessToken("ada@example.com")).status, 200)
        XCTAssertEqual(hub.call("GET", "/users/usr_support/apps/app_wiki/effective-permissions", token: hub.accessToken("ada@example.com")).status,
                       200, "Ada holds users.list through role_billing_admin")
    }
}
