import Foundation
import SQLiteKit

/// Rows a recipe test adds to a fresh sandbox (`test.sandbox{ fixtures = … }`): users,
/// entitlements and audit events, each a table of text fields. Numbers and booleans
/// arrive as text (`"true"`, `"1700000000"`); times are RFC 3339 or epoch seconds.
public struct FixtureRows: Sendable {
    public var users: [[String: String]] = []
    public var entitlements: [[String: String]] = []
    public var auditEvents: [[String: String]] = []

    public init(users: [[String: String]] = [], entitlements: [[String: String]] = [],
                auditEvents: [[String: String]] = []) {
        self.users = users
        self.entitlements = entitlements
        self.auditEvents = auditEvents
    }

    public var isEmpty: Bool { users.isEmpty && entitlements.isEmpty && auditEvents.isEmpty }

    static let userFields = ["id", "email", "display_name", "status", "mfa_enabled", "created_at", "last_login_at",
                             "organization_id"]
    static let entitlementFields = ["id", "user_id", "application_id", "organization_id", "status", "source",
                                    "ends_at", "disabled_reason", "created_at"]
    static let auditFields = ["id", "action", "actor_type", "actor_id", "target_type", "target_id", "target_user_id",
                              "application_id", "organization_id", "after", "timestamp"]
}

/// A fixture row that cannot be inserted: the message names the table, the row and the field.
public struct FixtureError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

extension HubSandbox {
    /// Inserts `rows` in one transaction (after the seeded data, so fixtures may name
    /// the fixed accounts: `usr_ada`, `app_wiki`, `org_acme`).
    public func insert(_ rows: FixtureRows) throws {
        engine.lock.lock()
        defer { engine.lock.unlock() }
        let now = engine.nowSeconds
        let seeder = Seeder(db: engine.db, seed: engine.options.seed, now: now, scale: engine.options.scale)
        try engine.db.transaction {
            for (i, row) in rows.users.enumerated() {
                let r = try FixtureRow(row, table: "users", index: i, allowed: FixtureRows.userFields, now: now)
                let email = try r.required("email")
                let id = r["id"] ?? engine.newId("usr_")
                let created = try r.time("created_at") ?? now - 30 * 86_400
                try seeder.user(id, email, r["display_name"] ?? String(email.prefix { $0 != "@" }),
                                r["status"] ?? "active", mfa: try r.bool("mfa_enabled") ?? false,
                                created: created, login: try r.time("last_login_at"))
                if let org = r["organization_id"] { try seeder.member(org, id, "org_member", created) }
            }
            for (i, row) in rows.entitlements.enumerated() {
                let r = try FixtureRow(row, table: "entitlements", index: i, allowed: FixtureRows.entitlementFields, now: now)
                try seeder.entitlement(r["id"] ?? engine.newId("ent_"), try r.required("user_id"), r["organization_id"],
                                       try r.required("application_id"), r["status"] ?? "active",
                                       r["source"] ?? "admin_grant", ends: try r.time("ends_at"),
                                       reason: r["disabled_reason"], created: try r.time("created_at") ?? now - 86_400)
            }
            for (i, row) in rows.auditEvents.enumerated() {
                let r = try FixtureRow(row, table: "audit_events", index: i, allowed: FixtureRows.auditFields, now: now)
                let user = r["target_user_id"]
                guard let target = r["target_id"] ?? user else {
                    throw FixtureError(message: "fixtures.audit_events[\(i + 1)]: give target_id or target_user_id")
                }
                try seeder.event(r["id"] ?? engine.newId("evt_"), try r.required("action"),
                                 actor: (r["actor_type"] ?? "user", r["actor_id"] ?? "usr_admin"),
                                 target: (r["target_type"] ?? "user", target), user: user,
                                 app: r["application_id"], org: r["organization_id"], after: r["after"],
                                 ts: try r.time("timestamp") ?? now)
            }
        }
    }
}

/// One fixture row, checked against its table's fields.
private struct FixtureRow {
    let fields: [String: String]
    let place: String

    init(_ fields: [String: String], table: String, index: Int, allowed: [String], now: Int) throws {
        place = "fixtures.\(table)[\(index + 1)]"
        if let unknown = fields.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw FixtureError(message: "\(place): unknown field '\(unknown)' (fields: \(allowed.joined(separator: ", ")))")
        }
        self.fields = fields
    }

    subscript(_ name: String) -> String? { fields[name] }

    func required(_ name: String) throws -> String {
        guard let value = fields[name], !value.isEmpty else { throw FixtureError(message: "\(place): '\(name)' is required") }
        return value
    }

    func time(_ name: String) throws -> Int? {
        guard let value = fields[name] else { return nil }
        if let seconds = Int(value) { return seconds }
        guard let t = Time.parse(value) else {
            throw FixtureError(message: "\(place): '\(name)' must be an RFC 3339 time such as 2026-01-15T12:00:00Z, got '\(value)'")
        }
        return t
    }

    func bool(_ name: String) throws -> Bool? {
        guard let value = fields[name] else { return nil }
        switch value {
        case "true", "1": return true
        case "false", "0": return false
        default: throw FixtureError(message: "\(place): '\(name)' must be true or false, got '\(value)'")
        }
    }
}
