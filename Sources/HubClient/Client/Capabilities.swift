import Foundation

/// What the caller may do, computed as the Hub's client rules say (docs/hub-api.md,
/// "Client rules"). Navigation and gating read only
/// this; the server stays the authority (a 403 marks it stale).
public struct Capabilities: Sendable, Equatable {
    /// Where the permissions came from.
    public enum Source: String, Sendable, Equatable {
        /// A user session: `/users/me`, `/users/me/roles`, `/roles?scope=platform`, `/organizations`.
        case userSession = "user_session"
        /// An API key whose permissions came from its own record (`GET /api-keys/{id}`).
        case apiKeyRecord = "api_key_record"
        /// An API key whose permissions the profile declares (`api_key_permissions`).
        case apiKeyDeclared = "api_key_declared"
        /// An API key whose permissions are not known: its record could not be read and
        /// the profile declares none. `permissions` is empty; hubscript never assumes a
        /// key's permissions, so a recipe that writes does not start (`HubGate`).
        case apiKeyUnknown = "api_key_unknown"
        /// An API key whose permissions are not known, in a profile that chose the Hub as
        /// the only gate (`gate = "hub"`): every platform permission is assumed, and the
        /// Hub's 403s alone decide.
        case apiKeyHubGate = "api_key_hub_gate"
    }

    public var source: Source
    public var permissions: Set<String>
    /// For `.apiKeyUnknown` and `.apiKeyHubGate` with an `api_key_id`: why the key's
    /// record gave no permissions (the Hub's answer to the read, a record that lists none,
    /// or the record of another key), for the message that says what to do.
    public var recordUnreadable: String?
    /// For `.apiKeyRecord`: the key's id and the status its record shows (`active`,
    /// `revoked`, `expired`; nil when the record shows none). A key that is not active
    /// can do nothing, whatever permissions its record still lists.
    public var keyID: String?
    public var keyStatus: String?

    /// Whether the key's record says it is not active (revoked, expired).
    public var keyInactive: Bool { source == .apiKeyRecord && keyStatus.map { $0 != "active" } == true }
    /// Platform role ids the user holds (including the implicit `role_member`).
    public var roleIDs: [String]
    /// Whether `/roles?scope=platform` answered; when it is 403, the permissions of the
    /// seed roles held are taken from `seedRolePermissions`.
    public var roleCatalogVisible: Bool
    public var userID: String?
    public var status: String?
    public var mfaEnabled: Bool?
    public var emailVerified: Bool?
    public var plan: String?
    public var planSources: [String]
    /// Organizations the user belongs to, and those where `my_role` is `org_admin`.
    public var organizations: [String]
    public var adminOfOrgs: [String]

    public init(source: Source, permissions: Set<String>, roleIDs: [String] = [], roleCatalogVisible: Bool = false,
                userID: String? = nil, status: String? = nil, mfaEnabled: Bool? = nil, emailVerified: Bool? = nil,
                plan: String? = nil, planSources: [String] = [], organizations: [String] = [], adminOfOrgs: [String] = []) {
        self.source = source
        self.permissions = permissions
        self.roleIDs = roleIDs
        self.roleCatalogVisible = roleCatalogVisible
        self.userID = userID
        self.status = status
        self.mfaEnabled = mfaEnabled
        self.emailVerified = emailVerified
        self.plan = plan
        self.planSources = planSources
        self.organizations = organizations
        self.adminOfOrgs = adminOfOrgs
    }

    public func has(_ permission: String) -> Bool { permissions.contains(permission) }

    /// Whether the permissions were not learnt (from a session, a key's record or a
    /// declaration): unknown, or assumed because the profile lets the Hub gate.
    public var permissionsUnknown: Bool { source == .apiKeyUnknown || source == .apiKeyHubGate }

    /// The members of `needs` the caller lacks, in the order given.
    public func missing(_ needs: [String]) -> [String] { needs.filter { !permissions.contains($0) } }

    public var canListUsers: Bool { has("users.list") }
    public var canManageUsers: Bool { has("users.manage") }
    public var canManageEntitlements: Bool { has("entitlements.manage") }
    public var canManageRoles: Bool { has("roles.manage") }
    public var canViewAudit: Bool { has("audit.view") }
    public var canManageApplications: Bool { has("applications.manage") }
    public var canManageOrganizations: Bool { has("organizations.manage") }
    public var canManageApiKeys: Bool { has("api_keys.manage") }
    public var canManageWebhooks: Bool { has("webhooks.manage") }
    public var canManageTenants: Bool { has("tenants.manage") }
    public var canManageBilling: Bool { has("billing.manage") }
    public var canSendNotifications: Bool { has("notifications.send") }

    /// Every platform permission key of docs/hub-api.md.
    public static let allPermissions: [String] = [
        "users.list", "users.manage", "entitlements.manage", "applications.manage", "roles.manage",
        "organizations.manage", "billing.manage", "audit.view", "webhooks.manage", "api_keys.manage",
        "tenants.manage", "notifications.send",
    ]

    /// The seed roles and their permissions (docs/hub-api.md "Permissions").
    public static let seedRolePermissions: [String: Set<String>] = [
        "role_superadmin": Set(allPermissions),
        "role_support": ["users.list", "audit.view"],
        "role_billing_admin": ["billing.manage", "users.list"],
        "role_member": [],
    ]

    /// The seed roles that grant `permission`, sorted: what to ask an admin for.
    public static func seedRoles(granting permission: String) -> [String] {
        seedRolePermissions.filter { $0.value.contains(permission) }.map(\.key).sorted()
    }
}
