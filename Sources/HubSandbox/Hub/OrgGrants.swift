import SQLiteKit
import Foundation

/// Organization grants: `POST /organizations/{id}/entitlements` (`entitlements.manage`,
/// Idempotency-Key required, rate class "grants") and their `member_scope` /
/// `member_overrides` through `PATCH /entitlements/{id}`.
///
/// An org grant is one entitlement row with `user_id` null, the organization, `source`
/// always `org_seat` (a `source` in the body is `422 validation_failed`). Its members get
/// seat rows (`org_seat`, the organization's id, linked to the grant): `all_members` (no
/// overrides allowed), `allowlist` (only the listed members) or `denylist` (everyone but
/// them). An override that is not a member is `422 member_override_not_a_member`
/// (`details.user_ids`); at most 1,000 overrides. A live grant of the same application to
/// the same organization is `409 entitlement_already_exists`. A member who already holds
/// a live seat of that application in that organization keeps it (no second row).
/// Changing the scope, the overrides or the grant's status brings the seats in line in
/// the same change: new members in scope get a seat, members out of scope have theirs
/// revoked (`excluded by member_scope`), and the grant's status (disabled, active,
/// revoked) is applied to its live seats. Each grant or change writes exactly one event
/// (`entitlement.granted`, or the PATCH's own), whose `after` holds
/// `included_member_count`. Member-scope fields on a personal row are `422
/// not_an_org_grant`. Lists show an org grant as one row with `user_id` null; its
/// `member_scope`, `member_overrides` and `included_member_count` are in the single
/// GET, the POST and PATCH answers.
extension HubEngine {
    static let memberScopes = ["all_members", "allowlist", "denylist"]
    static let maxMemberOverrides = 1000

    struct MemberScope: Equatable { var scope: String; var overrides: [String] }

    func grantToOrganization(_ c: RequestContext) throws -> Reply {
        try c.require("entitlements.manage")
        let org = c.params[0]
        guard try db.first("SELECT 1 FROM organizations WHERE id = ?", [.text(org)], { _ in true }) != nil else {
            throw HubErrorReply.notFound("Organization \(org)")
        }
        let b = try c.body()
        var bad: [(String, String)] = []
        let app = b["application_id"]?.stringValue ?? ""
        if app.isEmpty { bad.append(("application_id", "required")) }
        else if try db.first("SELECT 1 FROM applications WHERE id = ?", [.text(app)], { _ in true }) == nil {
            bad.append(("application_id", "unknown"))
        }
        if b["source"] != nil { bad.append(("source", "not_allowed")) }
        let scope = try memberScope(b, current: nil, org: org, bad: &bad) ?? MemberScope(scope: "all_members", overrides: [])
        func time(_ name: String) -> Int? {
            guard let v = b[name], !v.isNull else { return nil }
            guard let s = v.stringValue, let t = Time.parse(s) else { bad.append((name, "invalid")); return nil }
            return t
        }
        let starts = time("starts_at"), ends = time("ends_at")
        if let e = ends, e <= (starts ?? c.now) { bad.append(("ends_at", "before_start")) }
        if !bad.isEmpty { throw HubErrorReply.validation(bad) }
        if let existing = try db.first("""
            SELECT id FROM entitlements WHERE user_id = '' AND organization_id = ? AND application_id = ? AND status IN ('active', 'disabled')
            """, [.text(org), .text(app)], { $0.text(0) }) {
            throw HubErrorReply(status: 409, code: "entitlement_already_exists", message: "\(org) already holds a live grant of \(app).",
                                details: [("existing_entitlement_id", .string(existing))])
        }
        let id = newId("ent_")
        try db.run("""
            INSERT INTO entitlements(id, user_id, organization_id, application_id, status, source, starts_at, ends_at,
              disabled_reason, created_at, updated_at) VALUES (?, '', ?, ?, 'active', 'org_seat', ?, ?, NULL, ?, ?)
            """, [.text(id), .text(org), .text(app), .int(starts ?? c.now), .opt(ends), .int(c.now), .int(c.now)])
        try db.run("INSERT INTO org_grants(entitlement_id, member_scope, member_overrides) VALUES (?, ?, ?)",
                   [.text(id), .text(scope.scope), .text(scope.overrides.joined(separator: ","))])
        _ = try syncSeats(grant: id, org: org, app: app, status: "active", scope: scope, c)
        let json = try orgGrantJSON(try loadEntitlement(id))
        try audit(c, action: "entitlement.granted", target: ("entitlement", id), targetUser: nil, app: app, org: org, after: json)
        var r = Reply.json(201, json, etag: 1)
        r.headers.append(("Location", "/entitlements/\(id)"))
        return r
    }

    /// The member scope a body asks for (nil: none given); problems go to `bad`, an
    /// override that is not a member throws `member_override_not_a_member`.
    func memberScope(_ b: JSON, current: MemberScope?, org: String, bad: inout [(String, String)]) throws -> MemberScope? {
        guard b["member_scope"] != nil || b["member_overrides"] != nil else { return nil }
        var next = current ?? MemberScope(scope: "all_members", overrides: [])
        if let v = b["member_scope"] {
            if let s = v.stringValue, HubEngine.memberScopes.contains(s) { next.scope = s } else { bad.append(("member_scope", "invalid")); return nil }
        }
        if let v = b["member_overrides"] {
            if v.isNull { next.overrides = [] } else {
                guard case .array(let items) = v, items.allSatisfy({ $0.stringValue != nil }) else {
                    bad.append(("member_overrides", "invalid")); return nil
                }
                guard items.count <= HubEngine.maxMemberOverrides else { bad.append(("member_overrides", "too_many")); return nil }
                next.overrides = Array(Set(items.compactMap(\.stringValue))).sorted()
            }
        }
        if next.scope == "all_members", !next.overrides.isEmpty { bad.append(("member_overrides", "not_allowed_with_all_members")); return nil }
        var strangers: [String] = []
        for user in next.overrides where try db.first("SELECT 1 FROM org_members WHERE organization_id = ? AND user_id = ?",
                                                      [.text(org), .text(user)], { _ in true }) == nil {
            strangers.append(user)
        }
        if !strangers.isEmpty {
            throw HubErrorReply(status: 422, code: "member_override_not_a_member",
                                message: "Not members of \(org): \(strangers.joined(separator: ", ")).",
                                details: [("user_ids", .array(strangers.map(JSON.string)))])
        }
        return next
    }

    /// The grant's member scope as stored, or nil for a personal row.
    func storedScope(_ grant: String) throws -> MemberScope? {
        try db.first("SELECT member_scope, member_overrides FROM org_grants WHERE entitlement_id = ?", [.text(grant)]) {
            MemberScope(scope: $0.text(0), overrides: $0.text(1).split(separator: ",").map(String.init))
        }
    }

    /// Brings the grant's seats in line with its status and scope; returns how many
    /// members are included.
    @discardableResult
    func syncSeats(grant: String, org: String, app: String, status: String, scope: MemberScope, _ c: RequestContext) throws -> Int {
        let included = try includedMembers(org: org, scope: scope)
        var linked: [(seat: String, user: String, status: String)] = []
        try db.query("""
            SELECT e.id, e.user_id, e.status FROM org_grant_seats g JOIN entitlements e ON e.id = g.seat_id WHERE g.grant_id = ?
            """, [.text(grant)]) { linked.append(($0.text(0), $0.text(1), $0.text(2))) }
        for seat in linked where seat.status != "revoked" {
            let target: (status: String, reason: String?)
            if status == "revoked" { target = ("revoked", "organization grant revoked") }
            else if !included.contains(seat.user) { target = ("revoked", "excluded by member_scope") }
            else if status == "disabled" { target = ("disabled", "organization grant disabled") }
            else { target = (seat.status == "expired" ? "expired" : "active", nil) }
            if target.status != seat.status {
                try db.run("UPDATE entitlements SET status = ?, disabled_reason = ?, updated_at = ?, version = version + 1 WHERE id = ?",
                           [.text(target.status), .opt(target.reason), .int(c.now), .text(seat.seat)])
            }
        }
        guard status == "active" || status == "disabled" else { return 0 }
        let seated = Set(linked.filter { $0.status != "revoked" }.map(\.user))
        for user in included.sorted() where !seated.contains(user) {
            let held = try db.first("""
                SELECT 1 FROM entitlements WHERE user_id = ? AND organization_id = ? AND application_id = ? AND status IN ('active', 'disabled')
                """, [.text(user), .text(org), .text(app)], { _ in true }) != nil
            if held { continue }
            let seat = newId("ent_")
            try db.run("""
                INSERT INTO entitlements(id, user_id, organization_id, application_id, status, source, starts_at, ends_at,
                  disabled_reason, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'org_seat', ?, NULL, ?, ?, ?)
                """, [.text(seat), .text(user), .text(org), .text(app), .text(status), .int(c.now),
                      .opt(status == "disabled" ? "organization grant disabled" : nil), .int(c.now), .int(c.now)])
            try db.run("INSERT INTO org_grant_seats(seat_id, grant_id) VALUES (?, ?)", [.text(seat), .text(grant)])
        }
        return included.count
    }

    /// The members of `org` that `scope` includes.
    func includedMembers(org: String, scope: MemberScope) throws -> Set<String> {
        var members: [String] = []
        try db.query("SELECT user_id FROM org_members WHERE organization_id = ? ORDER BY seq", [.text(org)]) { members.append($0.text(0)) }
        let overrides = Set(scope.overrides)
        return Set(members.filter {
            switch scope.scope {
            case "allowlist": return overrides.contains($0)
            case "denylist": return !overrides.contains($0)
            default: return true
            }
        })
    }

    /// An org grant's JSON (with `scope` instead of the stored one when given) with `member_scope`, `member_overrides` and
    /// `included_member_count`; a personal row as it is.
    func orgGrantJSON(_ e: EntitlementRow, scope given: MemberScope? = nil) throws -> JSON {
        guard case .object(var fields) = e.json, let id = e.json["id"]?.stringValue, let scope = try given ?? storedScope(id) else {
            return e.json
        }
        let seats = e.status == "revoked" ? 0 : try includedMembers(org: e.org ?? "", scope: scope).count
        fields += [("member_scope", .string(scope.scope)), ("member_overrides", .array(scope.overrides.map(JSON.string))),
                   ("included_member_count", .int(seats))]
        return .object(fields)
    }
}
