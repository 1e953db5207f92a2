/// The tables the `hub` bindings return, field by field, as types an editor understands
/// (lua-language-server `---@class` declarations written by `hubscript docs luals`).
///
/// docs/hub-objects.md is the prose reference; a test reads its field tables and fails
/// when a field listed there is missing here (or one here, not marked `extra`, is missing
/// there), so the editor's completions and the documentation name the same fields.
public struct HubObjectType: Sendable {
    /// A field: `type` in lua-language-server's notation (`string`, `boolean`, `integer`,
    /// `string[]`, `hub.Actor`, …).
    public struct Field: Sendable {
        public let name: String
        public let type: String
        /// The Hub may send `json.null` here (docs/hub-objects.md's "null" column).
        public let nullable: Bool
        /// Present only on some results (an org grant's fields, a created key's secret):
        /// `nil` when absent. hub-objects.md mentions such fields in prose, not its table.
        public let extra: Bool
        public let note: String

        init(_ name: String, _ type: String, null nullable: Bool = false, extra: Bool = false, _ note: String = "") {
            self.name = name
            self.type = type
            self.nullable = nullable
            self.extra = extra
            self.note = note
        }
    }

    /// The class name, e.g. `hub.User`.
    public let className: String
    /// The heading of its section in docs/hub-objects.md, or nil when that page has no table for it.
    public let documentedAs: String?
    public let summary: String
    public let fields: [Field]
    /// Whether a Hub may send fields not listed (the class then also takes `[string]: any`).
    public let open: Bool

    init(_ className: String, documentedAs: String?, _ summary: String, open: Bool = true, _ fields: [Field]) {
        self.className = className
        self.documentedAs = documentedAs
        self.summary = summary
        self.fields = fields
        self.open = open
    }
}

public enum HubObjectTypes {
    private typealias F = HubObjectType.Field

    /// Every object class, in the order of docs/hub-objects.md.
    public static let all: [HubObjectType] = [
        HubObjectType("hub.User", documentedAs: "User", "A Hub user (hub.users.get, list, and the result of suspend, reactivate, update).", [
            F("id", "string", "usr_…"), F("email", "string"), F("email_verified", "boolean"), F("display_name", "string"),
            F("status", "string", "active, invited, suspended, deleted"), F("mfa_enabled", "boolean"),
            F("created_at", "string", "timestamp"), F("updated_at", "string", "timestamp"),
            F("last_login_at", "string", null: true, "timestamp; json.null: never logged in"),
        ]),
        HubObjectType("hub.Entitlement", documentedAs: "Entitlement", "Access to an application, personal or an organization's seat.", [
            F("id", "string", "ent_…"), F("user_id", "string", null: true, "json.null on an organization's grant"),
            F("organization_id", "string", null: true), F("application_id", "string", "app_…"),
            F("status", "string", "active, disabled, expired, revoked"), F("source", "string", "purchase, trial, admin_grant, org_seat"),
            F("starts_at", "string", "timestamp"), F("ends_at", "string", null: true, "timestamp; json.null: no end"),
            F("disabled_reason", "string", null: true), F("created_at", "string", "timestamp"), F("updated_at", "string", "timestamp"),
            F("member_scope", "string", extra: true, "an organization's grant only (not in lists)"),
            F("member_overrides", "string[]", extra: true, "an organization's grant only (not in lists)"),
            F("included_member_count", "integer", extra: true, "an organization's grant only (not in lists)"),
        ]),
        HubObjectType("hub.RoleAssignment", documentedAs: "Role assignment", "A role a user holds (hub.users.roles, hub.roles.assign).", [
            F("user_id", "string"), F("role_id", "string"), F("implicit", "boolean", "true for role_member"),
            F("assigned_at", "string", null: true, "timestamp"), F("assigned_by", "hub.Actor", null: true),
        ]),
        HubObjectType("hub.Organization", documentedAs: "Organization", "An organization.", [
            F("id", "string", "org_…"), F("name", "string"), F("slug", "string"),
            F("my_role", "string", null: true, "the caller's role in it"), F("created_at", "string", "timestamp"),
        ]),
        HubObjectType("hub.OrganizationMember", documentedAs: "Organization member", "A member of an organization.", [
            F("organization_id", "string"), F("user_id", "string"), F("role", "string", "org_admin, org_member"),
            F("joined_at", "string", null: true, "timestamp"), F("user", "table", null: true, "{id, email, display_name, status}"),
        ]),
        HubObjectType("hub.Session", documentedAs: "Session", "A user's live session.", [
            F("id", "string", "ses_…"), F("status", "string"), F("current", "boolean", "the caller's own session"),
            F("created_at", "string", "timestamp"), F("expires_at", "string", "timestamp"),
            F("last_seen_at", "string", null: true, "timestamp"), F("revoked_at", "string", null: true, "timestamp"),
            F("ip_address", "string", null: true), F("user_agent", "string", null: true),
        ]),
        HubObjectType("hub.ApiKey", documentedAs: "API key", "An API key (never its secret's text).", [
            F("id", "string", "key_…"), F("name", "string"), F("owner_user_id", "string"),
            F("prefix", "string", "the secret's visible start"), F("permissions", "string[]"), F("status", "string"),
            F("created_at", "string", "timestamp"), F("last_used_at", "string", null: true, "timestamp"),
            F("revoked_at", "string", null: true, "timestamp"),
            F("scope", "string", extra: true, "platform or an application id (get, create, rotate, update)"),
            F("mode", "string", extra: true, "live or test"), F("intended_use", "string", extra: true),
            F("restrict_destructive", "boolean", extra: true), F("expires_at", "string|json.Null", extra: true, "timestamp"),
            F("created_by", "hub.Actor", extra: true), F("rotated_at", "string|json.Null", extra: true, "timestamp"),
            F("secret_hint", "string", extra: true, "… and the last 4 characters"),
            F("secret_stored_in", "string", extra: true, "the vault entry (create, rotate)"),
            F("secret", "vault.Secret", extra: true, "an opaque handle for the new secret (create, rotate)"),
        ]),
        HubObjectType("hub.AuditEvent", documentedAs: "Audit event", "An audit event (hub.audit.query, hub.audit.get).", [
            F("id", "string", "evt_…"), F("timestamp", "string", "timestamp"), F("action", "string", "user.suspended, …"),
            F("actor", "hub.Actor"), F("target", "hub.Target"), F("target_user_id", "string", null: true),
            F("application_id", "string", null: true), F("organization_id", "string", null: true),
            F("before", "table", null: true, "a snapshot of what changed"), F("after", "table", null: true, "a snapshot of what changed"),
            F("request_id", "string", null: true),
        ]),
        HubObjectType("hub.Actor", documentedAs: nil, "Who did something.", open: false, [
            F("type", "string", "user, api_key or system"), F("id", "string", null: true),
        ]),
        HubObjectType("hub.Target", documentedAs: nil, "What an audit event is about.", open: false, [
            F("type", "string", "user, entitlement, role, organization, api_key, session, notification, …"), F("id", "string"),
        ]),
        HubObjectType("hub.Application", documentedAs: nil, "An application of the catalog (hub.applications.list).", [
            F("id", "string", "app_…"), F("name", "string"), F("slug", "string"), F("visibility", "string"),
            F("access_tier", "string"), F("receives_platform_notifications", "boolean"), F("created_at", "string", "timestamp"),
        ]),
        HubObjectType("hub.Role", documentedAs: nil, "A platform role (hub.roles.list, get, create, update).", [
            F("id", "string", "role_…"), F("name", "string"), F("description", "string"), F("scope", "string"),
            F("implicit", "boolean"), F("permissions", "string[]"),
            F("seed", "boolean", extra: true, "hub.roles.get"), F("assignment_count", "integer", extra: true, "hub.roles.get"),
        ]),
        HubObjectType("hub.Permission", documentedAs: nil, "A platform permission (hub.permissions.list).", [
            F("key", "string"), F("scope", "string"), F("description", "string"),
        ]),
        HubObjectType("hub.Capabilities", documentedAs: nil, "What the run's credential may do (hub.capabilities).", [
            F("permissions", "string[]"), F("permissions_known", "boolean"), F("source", "string"),
            F("user_id", "string", extra: true, "for a user session"),
        ]),
        HubObjectType("hub.Webhook", documentedAs: nil, "A webhook endpoint (never its signing secret).", [
            F("id", "string"), F("url", "string"), F("events", "string[]"), F("status", "string"),
            F("description", "string", extra: true),
        ]),
        HubObjectType("hub.WebhookDelivery", documentedAs: nil, "One delivery of an event to a webhook.", [
            F("id", "string"), F("event_id", "string", extra: true), F("status", "string"),
        ]),
        HubObjectType("hub.Notification", documentedAs: nil, "A notification of the caller's inbox.", [
            F("id", "string", "ntf_…"), F("category", "string", extra: true), F("title", "string", extra: true),
            F("body", "string", extra: true), F("state", "string", extra: true),
        ]),
    ]

    /// What each `hub` binding returns, by its name in the module (`users.get`).
    /// A list binding returns a lazy list of the named class (see `isList`).
    public static let returns: [String: String] = [
        "users.get": "hub.User", "users.list": "hub.User", "users.create": "hub.User", "users.suspend": "hub.User",
        "users.reactivate": "hub.User", "users.update": "hub.User", "users.delete": "boolean",
        "users.resend_invitation": "boolean", "users.roles": "hub.RoleAssignment", "users.export": "table",
        "users.effective_permissions": "table",
        "entitlements.get": "hub.Entitlement", "entitlements.list": "hub.Entitlement", "entitlements.for_user": "hub.Entitlement",
        "entitlements.grant": "hub.Entitlement", "entitlements.disable": "hub.Entitlement", "entitlements.enable": "hub.Entitlement",
        "entitlements.revoke": "hub.Entitlement", "entitlements.update": "hub.Entitlement",
        "organizations.list": "hub.Organization", "organizations.members": "hub.OrganizationMember",
        "organizations.grant": "hub.Entitlement", "organizations.remove_member": "boolean",
        "roles.list": "hub.Role[]", "roles.get": "hub.Role", "roles.create": "hub.Role", "roles.update": "hub.Role",
        "roles.delete": "boolean", "roles.assign": "hub.RoleAssignment", "roles.remove": "boolean",
        "sessions.list": "hub.Session", "sessions.revoke": "boolean", "sessions.revoke_all": "integer",
        "api_keys.list": "hub.ApiKey", "api_keys.get": "hub.ApiKey", "api_keys.create": "hub.ApiKey",
        "api_keys.rotate": "hub.ApiKey", "api_keys.update": "hub.ApiKey", "api_keys.revoke": "boolean",
        "audit.query": "hub.AuditEvent", "audit.get": "hub.AuditEvent",
        "applications.list": "hub.Application[]", "permissions.list": "hub.Permission[]", "capabilities": "hub.Capabilities",
        "available": "boolean", "notifications.send": "table", "inbox.list": "hub.Notification",
        "inbox.mark_read": "hub.Notification",
        "webhooks.list": "hub.Webhook", "webhooks.get": "hub.Webhook", "webhooks.create": "hub.Webhook",
        "webhooks.update": "hub.Webhook", "webhooks.delete": "boolean", "webhooks.deliveries": "hub.WebhookDelivery",
        "webhooks.redeliver": "boolean", "webhooks.rotate_secret": "table", "webhooks.test": "table",
    ]

    /// Whether the binding returns a lazy list (an iterator with `:collect()`, `:count()`, `:first()`).
    public static func isList(_ binding: String) -> Bool { HubModuleLua.listBindings.contains(binding) }
}
