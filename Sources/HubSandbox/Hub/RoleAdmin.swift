import SQLiteKit
import Foundation

/// Platform roles: read one, create, update, delete (`roles.manage`).
///
/// Rules (docs/hub-api.md, "The rest of the admin API"): a name matches
/// `^[a-z][a-z0-9_]{1,40}$` and a new role's id is `role_platform_<name>`; a name in use is
/// `409 role_name_taken`; unknown permission keys are `422 unknown_permission`
/// (`details.permissions`); a role may hold only permissions the caller holds (`403
/// role_escalation_forbidden`, `details.missing_permissions`); the four seed roles cannot
/// change or go (`403 seed_role_immutable`); a role still assigned cannot be deleted (`409
/// role_in_use`, `details.assignment_count`). Only the `platform` scope exists in the
/// sandbox (another scope is `422 validation_failed`, `scope: unsupported`). PATCH and
/// DELETE take If-Match. Each change writes one `role.created`, `role.updated` or
/// `role.deleted` event.
extension HubEngine {
    static let roleDescriptionMaxLength = 2000

    static func isSeedRole(_ id: String) -> Bool { Catalog.roles.contains { $0.id == id } }

    struct RoleRow { let json: JSON; let version: Int; let permissions: [String]; let name: String; let description: String? }

    func loadRole(_ id: String) throws -> RoleRow {
        guard let r = try db.first("""
            SELECT r.id, r.name, r.description, r.permissions, d.created_at, d.updated_at, COALESCE(d.version, 1),
              (SELECT COUNT(*) FROM role_assignments a WHERE a.role_id = r.id)
            FROM roles r LEFT JOIN role_details d ON d.id = r.id WHERE r.id = ?
            """, [.text(id)], { s -> RoleRow in
            let perms = s.text(3).split(separator: ",").map(String.init)
            let seed = HubEngine.isSeedRole(s.text(0))
            let json: JSON = .object([
                ("id", .string(s.text(0))), ("name", .string(s.text(1))), ("description", .string(s.text(2))),
                ("scope", .string("platform")), ("permissions", .array(perms.map(JSON.string))),
                ("implicit", .bool(s.text(0) == "role_member")), ("seed", .bool(seed)), ("assignment_count", .int(s.int(7))),
                ("created_at", .time(s.intOrNil(4))), ("updated_at", .time(s.intOrNil(5))),
            ])
            return RoleRow(json: json, version: s.int(6), permissions: perms, name: s.text(1), description: s.text(2))
        }) else { throw HubErrorReply.notFound("Role \(id)") }
        return r
    }

    func getRole(_ c: RequestContext) throws -> Reply {
        try c.require("roles.manage")
        let r = try loadRole(c.params[0])
        return .json(200, r.json, etag: r.version)
    }

    /// The permission list of a role body: known keys the caller holds, sorted, unique.
    private func rolePermissions(_ value: JSON?, _ c: RequestContext) throws -> [String]? {
        guard let value else { return nil }
        guard case .array(let items) = value, items.count <= 100, items.allSatisfy({ $0.stringValue != nil }) else {
            throw HubErrorReply.validation([("permissions", "invalid")])
        }
        let perms = Array(Set(items.compactMap(\.stringValue))).sorted()
        let unknown = perms.filter { !Catalog.allPermissions.contains($0) }
        if !unknown.isEmpty {
            throw HubErrorReply(status: 422, code: "unknown_permission", message: "Unknown permissions: \(unknown.joined(separator: ", ")).",
                                details: [("permissions", .array(unknown.map(JSON.string)))])
        }
        let missing = perms.filter { !c.who.can($0) }
        if !missing.isEmpty {
            throw HubErrorReply(status: 403, code: "role_escalation_forbidden",
                                message: "A role cannot hold permissions you lack (\(missing.joined(separator: ", "))).",
                                details: [("missing_permissions", .array(missing.map(JSON.string)))])
        }
        return perms
    }

    private static func roleDescription(_ value: JSON?, bad: inout [(String, String)]) -> String?? {
        guard let value else { return nil }
        if value.isNull { return .some(nil) }
        guard let s = value.stringValue, !s.unicodeScalars.contains(where: { $0.value == 0 }) else { bad.append(("description", "invalid")); return nil }
        guard s.count <= roleDescriptionMaxLength else { bad.append(("description", "too_long")); return nil }
        return .some(s)
    }

    func createRole(_ c: RequestContext) throws -> Reply {
        try c.require("roles.manage")
        let b = try c.body()
        var bad: [(String, String)] = []
        let name = b["name"]?.stringValue ?? ""
        if b["name"] == nil { bad.append(("name", "required")) } else if !HubEngine.isRoleName(name) { bad.append(("name", "invalid_format")) }
        if b["scope"] == nil { bad.append(("scope", "required")) }
        else if b["scope"]?.stringValue != "platform" { bad.append(("scope", "unsupported")) }
        if b["permissions"] == nil { bad.append(("permissions", "required")) }
        let description = HubEngine.roleDescription(b["description"], bad: &bad)
        if !bad.isEmpty { throw HubErrorReply.validation(bad) }
        let perms = try rolePermissions(b["permissions"], c) ?? []
        let id = "role_platform_" + name
        if let taken = try db.first("SELECT id FROM roles WHERE id = ? OR name = ?", [.text(id), .text(name)], { $0.text(0) }) {
            throw HubErrorReply(status: 409, code: "role_name_taken", message: "A role named \(name) already exists (\(taken)).",
                                details: [("existing_role_id", .string(taken))])
        }
        try db.run("INSERT INTO roles(id, name, description, permissions) VALUES (?,?,?,?)",
                   [.text(id), .text(name), .text((description ?? nil) ?? ""), .text(perms.joined(separator: ","))])
        try db.run("INSERT INTO role_details(id, created_at, updated_at) VALUES (?,?,?)", [.text(id), .int(c.now), .int(c.now)])
        let r = try loadRole(id)
        try audit(c, action: "role.created", target: ("role", id), targetUser: nil, after: r.json)
        var reply = Reply.json(201, r.json, etag: r.version)
        reply.headers.append(("Location", "/roles/\(id)"))
        return reply
    }

    func patchRole(_ c: RequestContext) throws -> Reply {
        try c.require("roles.manage")
        let id = c.params[0]
        let r = try loadRole(id)
        if HubEngine.isSeedRole(id) { throw HubEngine.seedRoleImmutable(id) }
        try c.checkIfMatch(r.version)
        let b = try c.body()
        let readOnly = b.objectKeys.filter { !["description", "permissions"].contains($0) }
        if !readOnly.isEmpty { throw HubErrorReply.readOnly(readOnly) }
        var bad: [(String, String)] = []
        let description = HubEngine.roleDescription(b["description"], bad: &bad)
        if !bad.isEmpty { throw HubErrorReply.validation(bad) }
        let perms = try rolePermissions(b["permissions"], c)
        var before: [(String, JSON)] = [], after: [(String, JSON)] = []
        if let perms, perms != r.permissions {
            before.append(("permissions", .array(r.permissions.map(JSON.string)))); after.append(("permissions", .array(perms.map(JSON.string))))
        }
        if let description, (description ?? "") != (r.description ?? "") {
            before.append(("description", .str(r.description))); after.append(("description", .str(description)))
        }
        guard !after.isEmpty else { return .json(200, r.json, etag: r.version) }
        try db.run("UPDATE roles SET description = COALESCE(?, description), permissions = COALESCE(?, permissions) WHERE id = ?",
                   [.opt(description.map { $0 ?? "" }), .opt(perms?.joined(separator: ",")), .text(id)])
        try db.run("""
            INSERT INTO role_details(id, created_at, updated_at, version) VALUES (?, ?, ?, 2)
            ON CONFLICT(id) DO UPDATE SET updated_at = excluded.updated_at, version = version + 1
            """, [.text(id), .int(c.now), .int(c.now)])
        try audit(c, action: "role.updated", target: ("role", id), targetUser: nil, before: .object(before), after: .object(after))
        let n = try loadRole(id)
        return .json(200, n.json, etag: n.version)
    }

    func deleteRole(_ c: RequestContext) throws -> Reply {
        try c.require("roles.manage")
        let id = c.params[0]
        let r = try loadRole(id)
        if HubEngine.isSeedRole(id) { throw HubEngine.seedRoleImmutable(id) }
        try c.checkIfMatch(r.version)
        let assigned = try db.first("SELECT COUNT(*) FROM role_assignments WHERE role_id = ?", [.text(id)], { $0.int(0) }) ?? 0
        guard assigned == 0 else {
            throw HubErrorReply(status: 409, code: "role_in_use",
                                message: "\(id) is assigned to \(assigned) user(s); remove those assignments first.",
                                details: [("role_id", .string(id)), ("assignment_count", .int(assigned))])
        }
        try db.run("DELETE FROM roles WHERE id = ?", [.text(id)])
        try db.run("DELETE FROM role_details WHERE id = ?", [.text(id)])
        try audit(c, action: "role.deleted", target: ("role", id), targetUser: nil, before: r.json)
        return .noContent
    }

    static func seedRoleImmutable(_ id: String) -> HubErrorReply {
        HubErrorReply(status: 403, code: "seed_role_immutable", message: "\(id) is a seed role; it cannot be changed or deleted.",
                      details: [("role_id", .string(id))])
    }

    /// `^[a-z][a-z0-9_]{1,40}$`.
    static func isRoleName(_ s: String) -> Bool {
        let bytes = Array(s.utf8)
        guard (2...41).contains(bytes.count), (0x61...0x7A).contains(bytes[0]) else { return false }
        return bytes.dropFirst().allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F }
    }
}
