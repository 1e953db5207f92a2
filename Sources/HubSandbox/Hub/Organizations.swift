import SQLiteKit
import Foundation

/// Organizations, their members, and the application catalog.
extension HubEngine {
    /// The caller's memberships (with `my_role`); every organization with `organizations.manage`.
    func listOrganizations(_ c: RequestContext) throws -> Reply {
        var q = ListQuery(from: "organizations o", columns: """
            o.id, o.name, o.slug, o.created_at, (SELECT role FROM org_members m WHERE m.organization_id = o.id AND m.user_id = ?)
            """, columnCount: 5, sort: "o.created_at", seq: "o.seq")
        q.args.append(.opt(c.who.userId))
        if !c.who.can("organizations.manage") {
            q.add("EXISTS (SELECT 1 FROM org_members m WHERE m.organization_id = o.id AND m.user_id = ?)", .opt(c.who.userId))
        }
        return try runList(c, q, scope: "organizations", filters: []) { s in
            .object([("id", .string(s.text(0))), ("name", .string(s.text(1))), ("slug", .string(s.text(2))),
                     ("created_at", .time(s.int(3))), ("my_role", .str(s.textOrNil(4)))])
        }
    }

    private func requireOrg(_ id: String) throws {
        guard try db.first("SELECT 1 FROM organizations WHERE id = ?", [.text(id)], { _ in true }) != nil else {
            throw HubErrorReply.notFound("Organization \(id)")
        }
    }

    func orgMembers(_ c: RequestContext) throws -> Reply {
        try c.require("organizations.manage")
        let org = c.params[0]
        try requireOrg(org)
        var q = ListQuery(from: "org_members m JOIN users u ON u.id = m.user_id",
                          columns: "m.user_id, m.role, m.joined_at, u.email, u.display_name, u.status",
                          columnCount: 6, sort: "m.joined_at", seq: "m.seq")
        q.add("m.organization_id = ?", .text(org))
        if let r = c.q("role") { q.add("m.role = ?", .text(r)) }
        return try runList(c, q, scope: "organizations/\(org)/members", filters: ["role"]) { s in
            .object([
                ("organization_id", .string(org)), ("user_id", .string(s.text(0))), ("role", .string(s.text(1))),
                ("joined_at", .time(s.int(2))),
                ("user", .object([("id", .string(s.text(0))), ("email", .string(s.text(3))),
                                  ("display_name", .string(s.text(4))), ("status", .string(s.text(5)))])),
            ])
        }
    }

    /// 204; also when the user is not a member (no event then).
    func removeOrgMember(_ c: RequestContext) throws -> Reply {
        try c.require("organizations.manage")
        let org = c.params[0], user = try c.userParam(c.params[1])
        try requireOrg(org)
        guard let m = try db.first("SELECT role, version FROM org_members WHERE organization_id = ? AND user_id = ?",
                                   [.text(org), .text(user)], { (role: $0.text(0), version: $0.int(1)) }) else { return .noContent }
        try c.checkIfMatch(m.version)
        try db.run("DELETE FROM org_members WHERE organization_id = ? AND user_id = ?", [.text(org), .text(user)])
        try audit(c, action: "organization.member_removed", target: ("organization", org), targetUser: user, org: org,
                  before: .object([("user_id", .string(user)), ("role", .string(m.role))]))
        return Reply(status: 204, body: nil, headers: [("ETag", "W/\"\(m.version + 1)\"")])
    }

    /// The catalog. `owned=true` (the caller's own apps) is always empty: the sandbox has
    /// no application owners.
    func listApplications(_ c: RequestContext) throws -> Reply {
        var q = ListQuery(from: "applications", columns: "id, name, slug, visibility, access_tier, receives_platform_notifications",
                          columnCount: 6, sort: "created_at", seq: "seq")
        if c.q("owned") == "true" { q.add("0") }
        return try runList(c, q, scope: "applications", filters: ["owned"]) { s in
            .object([("id", .string(s.text(0))), ("name", .string(s.text(1))), ("slug", .string(s.text(2))),
                     ("visibility", .string(s.text(3))), ("access_tier", .string(s.text(4))),
                     ("receives_platform_notifications", .bool(s.bool(5))), ("created_at", .time(s.int(6)))])
        }
    }
}
