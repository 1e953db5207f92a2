import XCTest
@testable import HubSandbox

/// Permissions per role and key, with exact 403 bodies; role escalation; role_member.
final class PermissionTests: XCTestCase {
    static func forbidden(_ p: String) -> String {
        #"{"error":{"code":"forbidden","message":"This action requires the permission \#(p).","details":{"required_permission":"\#(p)"}}}"#
    }

    func testSupportCanReadButNotManage() throws {
        let hub = try makeHub()
        let support = hub.accessToken("support@example.com")
        XCTAssertEqual(hub.call("GET", "/users", token: support).status, 200)
        XCTAssertEqual(hub.call("GET", "/audit-events", token: support).status, 200)
        let patch = hub.call("PATCH", "/users/usr_ada", token: support, body: #"{"display_name":"X"}"#)
        XCTAssertEqual(patch.status, 403)
        XCTAssertEqual(patch.text, Self.forbidden("users.manage"))
        XCTAssertEqual(hub.call("POST", "/users/usr_ada/suspend", token: support, body: "{}").text, Self.forbidden("users.manage"))
        XCTAssertEqual(hub.call("GET", "/roles?scope=platform", token: support).text, Self.forbidden("roles.manage"))
        XCTAssertEqual(hub.call("GET", "/api-keys", token: support).text, Self.forbidden("api_keys.manage"))
        XCTAssertEqual(hub.call("POST", "/users/usr_ada/entitlements", token: support, body: #"{"application_id":"app_chat","source":"trial"}"#,
                                headers: [("Idempotency-Key", "p1")]).text, Self.forbidden("entitlements.manage"))
    }

    func testBillingAdminAdaCannotReadAudit() throws {
        let hub = try makeHub()
        let ada = hub.accessToken("ada@example.com")
        XCTAssertEqual(hub.call("GET", "/users", token: ada).status, 200)
        XCTAssertEqual(hub.call("GET", "/audit-events", token: ada).text, Self.forbidden("audit.view"))
        XCTAssertEqual(hub.call("GET", "/organizations/org_acme/members", token: ada).text, Self.forbidden("organizations.manage"))
        XCTAssertEqual(hub.call("DELETE", "/users/usr_support/roles/role_support", token: ada).text, Self.forbidden("roles.manage"))
    }

    func testMemberSeesOwnRecordsOnly() throws {
        let hub = try makeHub()
        let users = hub.call("GET", "/users?status=active&limit=100").json["data"]?.items ?? []
        let plainId = try XCTUnwrap(users.compactMap { $0["id"]?.string }.first { id in
            hub.call("GET", "/users/\(id)/roles").json["data"]?.items.count == 1 && !id.hasSuffix("admin") && id.count > 10
                && hub.call("GET", "/users/\(id)").json["mfa_enabled"] == .bool(false)
        })
        let email = try XCTUnwrap(hub.call("GET", "/users/\(plainId)").json["email"]?.string)
        let token = hub.accessToken(email)
        XCTAssertEqual(hub.call("GET", "/users/me/entitlements", token: token).status, 200)
        XCTAssertEqual(hub.call("GET", "/users/\(plainId)", token: token).status, 200)
        XCTAssertEqual(hub.call("GET", "/users/usr_ada", token: token).text, Self.forbidden("users.list"))
        XCTAssertEqual(hub.call("GET", "/users", token: token).text, Self.forbidden("users.list"))
    }

    func testAPIKeyPermissionsAreItsOwnList() throws {
        let hub = try makeHub()
        let key = SandboxFixtures.adaKeySecret  // users.list only, although Ada is billing admin
        XCTAssertEqual(hub.call("GET", "/users", token: key).status, 200)
        XCTAssertEqual(hub.call("GET", "/audit-events", token: key).text, Self.forbidden("audit.view"))
        XCTAssertEqual(hub.call("GET", "/audit-events", token: SandboxFixtures.supportKeySecret).status, 200)
    }

    func testRoleEscalationIsForbidden() throws {
        let hub = try makeHub()
        let ops = SandboxFixtures.opsKeySecret
        let r = hub.call("POST", "/users/usr_support/roles/role_billing_admin", token: ops, body: "{}")
        XCTAssertEqual(r.status, 403)
        XCTAssertEqual(r.code, "role_escalation_forbidden")
        XCTAssertEqual(r.json["error"]?["details"]?["missing_permissions"], .array([.string("billing.manage")]))
        XCTAssertEqual(hub.call("POST", "/users/usr_ada/roles/role_support", token: ops, body: "{}").status, 201)
        XCTAssertEqual(hub.call("POST", "/users/usr_ada/roles/role_support", token: ops, body: "{}").status, 200)
    }

    func testMemberRoleIsImplicitAndCannotBeRemoved() throws {
        let hub = try makeHub()
        let roles = hub.call("GET", "/users/usr_ada/roles").json["data"]?.items ?? []
        XCTAssertEqual(roles.compactMap { $0["role_id"]?.string }, ["role_billing_admin", "role_member"])
        XCTAssertEqual(roles.last?["implicit"], .bool(true))
        let r = hub.call("DELETE", "/users/usr_ada/roles/role_member")
        XCTAssertEqual(r.status, 409)
        XCTAssertEqual(r.code, "member_role_required")
        XCTAssertEqual(hub.call("POST", "/users/usr_ada/roles/role_member", body: "{}").status, 200)
    }

    func testRoleRemovalIs204EvenWhenNotHeld() throws {
        let hub = try makeHub()
        XCTAssertEqual(hub.call("DELETE", "/users/usr_ada/roles/role_billing_admin").status, 204)
        XCTAssertEqual(hub.call("DELETE", "/users/usr_ada/roles/role_billing_admin").status, 204)
        XCTAssertEqual(hub.call("DELETE", "/users/usr_ada/roles/role_nope").status, 404)
        let ada = hub.accessToken("ada@example.com")
        XCTAssertEqual(hub.call("GET", "/users", token: ada).status, 403)
    }

    func testRolesListCarriesPermissions() throws {
        let hub = try makeHub()
        let roles = hub.call("GET", "/roles?scope=platform").json["data"]?.items ?? []
        let support = roles.first { $0["id"]?.string == "role_support" }
        XCTAssertEqual(support?["permissions"], .array([.string("users.list"), .string("audit.view")]))
        XCTAssertEqual(hub.call("GET", "/permissions?scope=platform").json["data"]?.items.count, Catalog.permissions.count)
    }
}
