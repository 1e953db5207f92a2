import SQLiteKit
import Foundation

/// Roles, permissions and role assignments.
///
/// `role_member` is held implicitly by every user: listed with `implicit: true`,
/// assigning it answers 200, removing it `409 member_role_required`. Assigning a role
/// holding a permission the caller lacks → `403 role_escalation_forbidden` with
/// `details.missing_permissions`. A user's role set has its own ETag (`roles_version`,
/// returned by `GET /users/{id}/roles` and every role write, checked by `If-Match`).
extension HubEngine {
    func listRoles(_ c: RequestContext) throws -> Reply {
        try c.require("roles.manage")
        var items: [JSON] = []
        try db.query("SELECT id, name, description, permissions FROM roles ORDER BY seq") { s in
            items.append(.object([
                ("id", .string(s.text(0))), ("name", .string(s.text(1))), ("description", .string(s.text(2))),
                ("scope", .string("platform")),
                ("permissions", .array(s.text(3).split(separator: ",").map { .string(String($0)) })),
                ("implicit", .bool(s.text(0) == "role_member")),
            ]))
        }
        return HubEngine.wholeList(items)
    }

    func listPermissions(_ c: RequestContext) throws -> Reply {
        HubEngine.wholeList(Catalog.permissions.map {
            .object([("key", .string($0.key)), ("scope", .string("platform")), ("description", .string($0.description))])
        })
    }

    private func rolesVersion(_ userId: String) throws -> Int {
        guard let v = try db.first("SELECT roles_version FROM users WHERE id = ?", [.text(userId)], { $0.int(0) }) else {
            throw HubErrorReply.notFound("User \(userId)")
        }
        return v
    }

    private static func assignmentJSON(user: String, role: String, at: Int, byType: String, byId: String?, implicit: Bool) -> JSON {
        .object([
            ("user_id", .string(user)), ("role_id", .string(role)), ("assigned_at", .time(at)),
            ("assigned_by", .object([("type", .string(byType)), ("id", .str(byId))])), ("implicit", .bool(implicit)),
        ])
    }

    private func implicitMember(_ userId: String) throws -> JSON {
        let created = try db.first("SELECT created_at FROM users WHERE id = ?", [.text(userId)]) { $0.int(0) } ?? 0
        return HubEngine.assignmentJSON(user: userId, role: "role_member", at: created, byType: "system", byId: nil, implicit: true)
    }

    func userRoles(_ c: RequestContext) throws -> Reply {
        let id = try c.userParam(c.params[0])
        try requireReadUser(c, id)
        let version = try rolesVersion(id)
        var items: [JSON] = []
        try db.query("SELECT role_id, assigned_at, assigned_by_type, assigned_by_id FROM role_assignments WHERE user_id = ? ORDER BY assigned_at DESC, seq DESC",
                     [.text(id)]) { s in
            items.append(HubEngine.assignmentJSON(user: id, role: s.text(0), at: s.int(1), byType: s.text(2), byId: s.textOrNil(3), implicit: false))
        }
        items.append(try implicitMember(id))
        var r = HubEngine.wholeList(items)
        r.headers.append(("ETag", "W/\"\(version)\""))
        return r
    }

    func assignRole(_ c: RequestContext) throws -> Reply {
        let id = try c.userParam(c.params[0]), role = c.params[1]
        try c.require("roles.manage")
        let version = try rolesVersion(id)
        guard let perms = try db.first("SELECT permissions FROM roles WHERE id = ?", [.text(role)], { HubEngine.permissionSet($0.text(0)) })
        else { throw HubErrorReply.notFound("Role \(role)") }
        try c.checkIfMatch(version)
        if role == "role_member" { return .json(200, try implicitMember(id), etag: version) }
        let missing = perms.subtracting(c.who.permissions).sorted()
        guard missing.isEmpty else {
            throw HubErrorReply(status: 403, code: "role_escalation_forbidden",
                           message: "You cannot assign \(role): it holds permissions you lack (\(missing.joined(separator: ", "))).",
                           details: [("role_id", .string(role)), ("missing_permissions", .array(missing.map(JSON.string)))])
        }
        if let existing = try db.first("SELECT assigned_at, assigned_by_type, assigned_by_id FROM role_assignments WHERE user_id = ? AND role_id = ?",
                                       [.text(id), .text(role)], {
            HubEngine.assignmentJSON(user: id, role: role, at: $0.int(0), byType: $0.text(1), byId: $0.textOrNil(2), implicit: false)
        }) { return .json(200, existing, etag: version) }
        let actor = c.who.actor
        try db.run("INSERT INTO role_assignments(user_id, role_id, assigned_at, assigned_by_type, assigned_by_id) VALUES (?,?,?,?,?)",
                   [.text(id), .text(role), .int(c.now), .text(actor.type), .text(actor.id)])
        try db.run("UPDATE users SET roles_version = roles_version + 1 WHERE id = ?", [.text(id)])
        try audit(c, action: "role.assigned", target: ("role", role), targetUser: id, after: .object([("role_id", .string(role))]))
        return .json(201, HubEngine.assignmentJSON(user: id, role: role, at: c.now, byType: actor.type, byId: actor.id, implicit: false),
                     etag: version + 1)
    }

    func removeRole(_ c: RequestContext) throws -> Reply {
        let id = try c.userParam(c.params[0]), role = c.params[1]
        try c.require("roles.manage")
        let version = try rolesVersion(id)
        guard try db.first("SELECT 1 FROM roles WHERE id = ?", [.text(role)], { _ in true }) != nil else {
            throw HubErrorReply.notFound("Role \(role)")
        }
        if role == "role_member" {
            throw HubErrorReply(status: 409, code: "member_role_required",
                           message: "role_member is held implicitly by every user and cannot be removed.",
                           details: [("role_id", .string(role))])
        }
        try c.checkIfMatch(version)
        let n = try db.run("DELETE FROM role_assignments WHERE user_id = ? AND role_id = ?", [.text(id), .text(role)])
        guard n > 0 else { return Reply(status: 204, body: nil, headers: [("ETag", "W/\"\(version)\"")]) }
        try db.run("UPDATE users SET roles_version = roles_version + 1 WHERE id = ?", [.text(id)])
        try audit(c, action: "role.removed", target: ("role", role), targetUser: id, before: .object([("role_id", .string(role))]))
        return Reply(status: 204, body: nil, headers: [("ETag", "W/\"\(version + 1)\"")])
    }
}
