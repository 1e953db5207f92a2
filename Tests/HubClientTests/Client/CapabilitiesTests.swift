import Foundation
import HTTPKit
import Testing
@testable import HubClient

@Suite("Capabilities")
struct CapabilitiesTests {
    static func page(_ items: [HubJSON]) -> HTTPResponseMessage {
        jsonResponse(["data": .array(items), "page": ["next_cursor": .null, "has_more": false]])
    }

    static let catalog: [HubJSON] = [
        ["id": "role_superadmin", "permissions": .array(Capabilities.allPermissions.map { .string($0) })],
        ["id": "role_support", "permissions": ["users.list", "audit.view"]],
        ["id": "role_billing_admin", "permissions": ["billing.manage", "users.list"]],
        ["id": "role_member", "permissions": []],
    ]

    /// A Hub for a user holding `roles`; `/roles` answers 403 unless `catalogVisible`.
    static func userHub(roles: [String], catalogVisible: Bool) -> ScriptedHub.Script {
        { request, _ in
            switch request.path {
            case "/users/me":
                return jsonResponse(["id": "usr_ada", "status": "active", "mfa_enabled": true, "email_verified": true,
                                     "plan": "standard", "plan_sources": ["personal"]])
            case "/users/me/roles":
                return page(roles.map { ["user_id": "usr_ada", "role_id": .string($0), "implicit": false] })
            case "/roles":
                return catalogVisible ? page(catalog) : errorResponse(403, "forbidden", details: ["required_permission": "roles.manage"])
            case "/organizations":
                return page([["id": "org_acme", "my_role": "org_admin"], ["id": "org_two", "my_role": "member"]])
            default:
                return errorResponse(403, "forbidden", details: ["required_permission": "users.manage"])
            }
        }
    }

    @Test("a superadmin's capabilities come from the role catalog", arguments: TransportKind.allCases)
    func superadmin(kind: TransportKind) throws {
        let h = try Harness(kind, Self.userHub(roles: ["role_superadmin"], catalogVisible: true))
        let caps = try h.client.capabilities()
        #expect(caps.source == .userSession)
        #expect(caps.permissions == Set(Capabilities.allPermissions))
        #expect(caps.canListUsers && caps.canManageUsers && caps.canManageEntitlements && caps.canManageRoles && caps.canViewAudit)
        #expect(caps.canManageApiKeys && caps.canManageBilling && caps.canSendNotifications && caps.canManageTenants)
        #expect(caps.roleIDs == ["role_superadmin", "role_member"])
        #expect(caps.roleCatalogVisible)
        #expect(caps.userID == "usr_ada" && caps.status == "active" && caps.mfaEnabled == true && caps.plan == "standard")
        #expect(caps.planSources == ["personal"])
        #expect(caps.organizations == ["org_acme", "org_two"])
        #expect(caps.adminOfOrgs == ["org_acme"])
        #expect(h.requests.map(\.path) == ["/users/me", "/users/me/roles", "/roles", "/organizations"])
        #expect(h.requests[2].queryItems.contains { $0 == ("scope", "platform") })
    }

    @Test("/roles 403: the seed roles held give the permissions (support)", arguments: TransportKind.allCases)
    func support(kind: TransportKind) throws {
        let h = try Harness(kind, Self.userHub(roles: ["role_support"], catalogVisible: false))
        let caps = try h.client.capabilities()
        #expect(caps.permissions == ["users.list", "audit.view"])
        #expect(caps.canListUsers && caps.canViewAudit)
        #expect(!caps.canManageUsers && !caps.canManageRoles && !caps.canManageEntitlements)
        #expect(!caps.roleCatalogVisible)
        #expect(caps.missing(["users.list", "users.manage", "audit.view"]) == ["users.manage"])
        // The 403 inside the computation does not leave them stale.
        #expect(!h.client.capabilitiesAreStale)
        _ = try h.client.capabilities()
        #expect(h.requests.count == 4)
    }

    @Test("an ordinary member has no platform permissions")
    func member() throws {
        let h = try Harness(.inProcess, Self.userHub(roles: [], catalogVisible: false))
        let caps = try h.client.capabilities()
        #expect(caps.permissions.isEmpty)
        #expect(caps.roleIDs == ["role_member"])
    }

    @Test("a 403 from the server marks capabilities stale; the next check refetches", arguments: TransportKind.allCases)
    func staleOn403(kind: TransportKind) throws {
        let h = try Harness(kind, Self.userHub(roles: ["role_billing_admin"], catalogVisible: false))
        #expect(try h.client.capabilities().permissions == ["billing.manage", "users.list"])
        #expect(!h.client.capabilitiesAreStale)
        let err = hubError { try h.client.post("/users/usr_1/suspend", body: [:]) }
        #expect(err?.code == "forbidden")
        #expect(h.client.capabilitiesAreStale)
        let before = h.requests.count
        _ = try h.client.capabilities()
        #expect(h.requests.count == before + 4)
    }

    @Test("an API key: user_token_required → the declared permissions, else unknown (never all)", arguments: TransportKind.allCases)
    func apiKey(kind: TransportKind) throws {
        let script: ScriptedHub.Script = { _, _ in errorResponse(400, "user_token_required") }
        let declared = try Harness(kind, configure: { $0.apiKeyPermissions = ["users.list", "audit.view"] }, script)
        let caps = try declared.client.capabilities()
        #expect(caps.source == .apiKeyDeclared)
        #expect(caps.permissions == ["users.list", "audit.view"])
        #expect(declared.requests.map(\.path) == ["/users/me"])

        let undeclared = try Harness(kind, script)
        let unknown = try undeclared.client.capabilities()
        #expect(unknown.source == .apiKeyUnknown)
        #expect(unknown.permissions.isEmpty)
        #expect(unknown.permissionsUnknown)
        #expect(unknown.recordUnreadable == nil)
    }

    @Test("an API key whose record is unreadable and permissions undeclared: unknown, with the Hub's answer",
          arguments: TransportKind.allCases)
    func unreadableRecordIsUnknown(kind: TransportKind) throws {
        let script: ScriptedHub.Script = { _, _ in errorResponse(400, "user_token_required") }
        let h = try Harness(kind, credential: .apiKey("satk_test_ops"), configure: { $0.apiKeyID = "key_ops" }, script)
        let caps = try h.client.capabilities()
        #expect(caps.source == .apiKeyUnknown)
        #expect(caps.permissions.isEmpty)
        #expect(caps.recordUnreadable?.hasPrefix("reading the record of key_ops: user_token_required (400): ") == true)
        #expect(h.requests.map(\.path) == ["/api-keys/key_ops"])
    }

    @Test("gate = hub: unknown permissions are all assumed, and say so in their source", arguments: TransportKind.allCases)
    func hubIsOnlyGate(kind: TransportKind) throws {
        let script: ScriptedHub.Script = { _, _ in errorResponse(400, "user_token_required") }
        let h = try Harness(kind, credential: .apiKey("satk_test_ops"), configure: { $0.hubIsOnlyGate = true }, script)
        let caps = try h.client.capabilities()
        #expect(caps.source == .apiKeyHubGate)
        #expect(caps.permissions == Set(Capabilities.allPermissions))
        #expect(caps.permissionsUnknown)
        #expect(h.requests.isEmpty)
    }

    @Test("api_key_record_profile: the key's record is read with the reader (a user session), not by the key",
          arguments: TransportKind.allCases)
    func recordReadByAnotherCredential(kind: TransportKind) throws {
        let script: ScriptedHub.Script = { _, _ in errorResponse(400, "user_token_required") }
        let asked = LockedList()
        let h = try Harness(kind, credential: .apiKey("satk_test_ops"), configure: {
            $0.apiKeyID = "key_ops"
            $0.apiKeyRecordReader = { id in
                asked.append(id)
                return HubResponse(status: 200, headers: HTTPHeaders(), body: Data(), json: ["id": "key_ops", "permissions": ["users.list", "users.manage"]], requestID: "req_1")
            }
        }, script)
        let caps = try h.client.capabilities()
        #expect(caps.source == .apiKeyRecord)
        #expect(caps.permissions == ["users.list", "users.manage"])
        #expect(asked.items == ["key_ops"])
        #expect(h.requests.isEmpty)
    }

    @Test("a satk_ API key is not asked /users/me: its record, else the declared permissions", arguments: TransportKind.allCases)
    func satkKeySkipsUsersMe(kind: TransportKind) throws {
        let script: ScriptedHub.Script = { request, _ in
            request.path == "/api-keys/key_jobs"
                ? jsonResponse(["id": "key_jobs", "permissions": ["users.list", "entitlements.manage"]])
                : errorResponse(400, "user_token_required")
        }
        let recorded = try Harness(kind, credential: .apiKey("satk_test_jobs"), configure: { $0.apiKeyID = "key_jobs" }, script)
        let caps = try recorded.client.capabilities()
        #expect(caps.source == .apiKeyRecord)
        #expect(caps.permissions == ["users.list", "entitlements.manage"])
        #expect(recorded.requests.map(\.path) == ["/api-keys/key_jobs"])

        let declared = try Harness(kind, credential: .apiKey("satk_test_other"), configure: { $0.apiKeyPermissions = ["audit.view"] }, script)
        #expect(try declared.client.capabilities().source == .apiKeyDeclared)
        #expect(declared.requests.isEmpty)
    }
}

/// Strings appended from any thread.
final class LockedList: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [String] = []
    func append(_ value: String) { lock.withLock { values.append(value) } }
    var items: [String] { lock.withLock { values } }
}
