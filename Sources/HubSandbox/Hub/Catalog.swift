/// Platform permissions and seed roles (docs/hub-api.md "Permissions").
enum Catalog {
    static let permissions: [(key: String, description: String)] = [
        ("users.list", "List and view users, their roles, entitlements and sessions."),
        ("users.manage", "Edit, suspend and reactivate users; revoke their sessions."),
        ("entitlements.manage", "Grant, disable, enable and revoke entitlements."),
        ("applications.manage", "Manage the application catalog."),
        ("roles.manage", "View roles; assign and remove platform roles."),
        ("organizations.manage", "View all organizations and manage their members."),
        ("billing.manage", "Manage billing and subscriptions."),
        ("audit.view", "Read the audit log."),
        ("webhooks.manage", "Manage webhooks."),
        ("api_keys.manage", "List and revoke API keys."),
        ("tenants.manage", "Manage tenants."),
        ("notifications.send", "Send notifications to users on behalf of an application (sandbox)."),
    ]
    static let allPermissions = permissions.map(\.key)

    static let roles: [(id: String, name: String, description: String, permissions: [String])] = [
        ("role_superadmin", "Super admin", "Every platform permission.", allPermissions),
        ("role_support", "Support", "Read users and the audit log.", ["users.list", "audit.view"]),
        ("role_billing_admin", "Billing admin", "Billing, and reading users.", ["billing.manage", "users.list"]),
        ("role_member", "Member", "Every user holds it implicitly; no permissions.", []),
    ]
}
