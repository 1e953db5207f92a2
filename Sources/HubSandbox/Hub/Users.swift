import SQLiteKit
import Foundation

/// Users: list, read, PATCH, suspend, reactivate.
///
/// Deleted users are terminal and left out of lists unless `status` or
/// `include_inactive=true` is passed. A user may read their own record without
/// `users.list`. `email_verified` is false exactly for invited users. Suspending revokes every live session of the user and writes one
/// `user.suspended` event (its `after.sessions_revoked` counts them); entitlements are untouched.
extension HubEngine {
    static let userColumns = "u.id, u.email, u.display_name, u.status, u.mfa_enabled, u.created_at, u.updated_at, u.last_login_at, u.version"

    static func userJSON(_ s: Statement) -> JSON {
        .object([
            ("id", .string(s.text(0))), ("email", .string(s.text(1))), ("display_name", .string(s.text(2))),
            ("status", .string(s.text(3))), ("mfa_enabled", .bool(s.bool(4))),
            ("email_verified", .bool(s.text(3) != "invited")), ("created_at", .time(s.int(5))),
            ("updated_at", .time(s.int(6))), ("last_login_at", .time(s.intOrNil(7))),
        ])
    }

    struct UserRow { let json: JSON; let status: String; let version: Int; let email: String; let name: String }

    /// The user `id` or `404 not_found`.
    func loadUser(_ id: String) throws -> UserRow {
        guard let u = try db.first("SELECT \(HubEngine.userColumns) FROM users u WHERE u.id = ?", [.text(id)], {
            UserRow(json: HubEngine.userJSON($0), status: $0.text(3), version: $0.int(8), email: $0.text(1), name: $0.text(2))
        }) else { throw HubErrorReply.notFound("User \(id)") }
        return u
    }

    /// Self-service reads need nothing; reading others needs `users.list`.
    func requireReadUser(_ c: RequestContext, _ id: String) throws {
        if !c.isSelf(id) { try c.require("users.list") }
    }

    func listUsers(_ c: RequestContext) throws -> Reply {
        try c.require("users.list")
        var q = ListQuery(from: "users u", columns: HubEngine.userColumns, columnCount: 9, sort: "u.created_at", seq: "u.seq")
        if let s = c.q("status") { q.add("u.status = ?", .text(s)) } else if c.q("include_inactive") != "true" {
            q.add("u.status != 'deleted'")
        }
        if let e = c.q("email") { q.add("u.email = ?", .text(e.lowercased())) }
        if let p = c.q("q") {
            guard p.count >= 3 else { throw HubErrorReply.validation([("q", "too_short")]) }
            let like = p.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
                .replacingOccurrences(of: "_", with: "\\_") + "%"
            q.add("(u.email LIKE ? ESCAPE '\\' OR u.display_name LIKE ? ESCAPE '\\')", .text(like), .text(like))
        }
        if let o = c.q("organization_id") {
            q.add("EXISTS (SELECT 1 FROM org_members m WHERE m.user_id = u.id AND m.organization_id = ?)", .text(o))
        }
        if let t = try HubEngine.timeFilter(c, "created_after") { q.add("u.created_at > ?", .int(t)) }
        if let t = try HubEngine.timeFilter(c, "created_before") { q.add("u.created_at < ?", .int(t)) }
        return try runList(c, q, scope: "users", filters: ["status", "email", "q", "organization_id", "created_after",
                                                            "created_before", "include_inactive"], map: HubEngine.userJSON)
    }

    func getUser(_ c: RequestContext) throws -> Reply {
        let id = try c.userParam(c.params[0])
        try requireReadUser(c, id)
        let u = try loadLiveUser(id)
        return .json(200, u.json, etag: u.version)
    }

    func patchUser(_ c: RequestContext) throws -> Reply {
        let id = try c.userParam(c.params[0])
        try c.require("users.manage")
        let u = try loadUser(id)
        try c.checkIfMatch(u.version)
        let b = try c.body()
        let readOnly = b.objectKeys.filter { ["id", "status", "mfa_enabled", "created_at", "updated_at", "last_login_at"].contains($0) }
        if !readOnly.isEmpty { throw HubErrorReply.readOnly(readOnly) }
        var before: [(String, JSON)] = [], after: [(String, JSON)] = []
        var name = u.name, email = u.email
        if let v = b["display_name"] {
            guard let s = v.stringValue, (1...200).contains(s.count) else { throw HubErrorReply.validation([("display_name", "invalid")]) }
            if s != name { before.append(("display_name", .string(name))); after.append(("display_name", .string(s))); name = s }
        }
        if let v = b["email"] {
            guard let s = v.stringValue?.lowercased(), s.contains("@"), s.count <= 254 else { throw HubErrorReply.validation([("email", "invalid")]) }
            if s != email {
                if try db.first("SELECT 1 FROM users WHERE email = ?", [.text(s)], { _ in true }) != nil {
                    throw HubErrorReply.validation([("email", "taken")])
                }
                before.append(("email", .string(email))); after.append(("email", .string(s))); email = s
            }
        }
        guard !after.isEmpty else { return .json(200, u.json, etag: u.version) }
        try db.run("UPDATE users SET display_name = ?, email = ?, updated_at = ?, version = version + 1 WHERE id = ?",
                   [.text(name), .text(email), .int(c.now), .text(id)])
        try audit(c, action: "user.updated", target: ("user", id), targetUser: id, before: .object(before), after: .object(after))
        let n = try loadUser(id)
        return .json(200, n.json, etag: n.version)
    }

    func suspendUser(_ c: RequestContext) throws -> Reply {
        let id = try c.userParam(c.params[0])
        try c.require("users.manage")
        let u = try loadUser(id)
        try c.checkIfMatch(u.version)
        let b = try c.body()
        if let r = b["reason"], r.stringValue == nil, !r.isNull { throw HubErrorReply.validation([("reason", "invalid")]) }
        guard u.status == "active" || u.status == "invited" else { throw HubErrorReply.invalidTransition(from: u.status, to: "suspended") }
        try db.run("UPDATE users SET status = 'suspended', updated_at = ?, version = version + 1 WHERE id = ?", [.int(c.now), .text(id)])
        let revoked = try db.run("UPDATE sessions SET revoked_at = ?, version = version + 1 WHERE user_id = ? AND revoked_at IS NULL",
                                 [.int(c.now), .text(id)])
        try audit(c, action: "user.suspended", target: ("user", id), targetUser: id,
                  before: .object([("status", .string(u.status))]),
                  after: .object([("status", .string("suspended")), ("reason", b["reason"] ?? .null), ("sessions_revoked", .int(revoked))]))
        let n = try loadUser(id)
        return .json(200, n.json, etag: n.version)
    }

    func reactivateUser(_ c: RequestContext) throws -> Reply {
        let id = try c.userParam(c.params[0])
        try c.require("users.manage")
        let u = try loadUser(id)
        try c.checkIfMatch(u.version)
        guard u.status == "suspended" else { throw HubErrorReply.invalidTransition(from: u.status, to: "active") }
        try db.run("UPDATE users SET status = 'active', updated_at = ?, version = version + 1 WHERE id = ?", [.int(c.now), .text(id)])
        try audit(c, action: "user.reactivated", target: ("user", id), targetUser: id,
                  before: .object([("status", .string("suspended"))]), after: .object([("status", .string("active"))]))
        let n = try loadUser(id)
        return .json(200, n.json, etag: n.version)
    }
}
