import SQLiteKit
import Foundation

/// Entitlements: lists, grant, read, status changes.
///
/// Revoked rows are terminal and hidden from lists unless `status` or
/// `include_inactive=true`. One live (active or disabled) personal row per (user, app).
/// Status machine: active ⇄ disabled (a reason is required to disable),
/// active/disabled/expired → revoked (terminal, reason required); anything else,
/// including "to the same status", is `422 invalid_status_transition`.
extension HubEngine {
    static let entitlementColumns = """
        e.id, e.user_id, e.organization_id, e.application_id, e.status, e.source, e.starts_at, e.ends_at,
        e.disabled_reason, e.created_at, e.updated_at, e.version
        """
    static let entitlementFilters = ["application_id", "status", "user_id", "organization_id", "source", "include_inactive"]

    static func entitlementJSON(_ s: Statement) -> JSON {
        .object([
            ("id", .string(s.text(0))), ("user_id", s.text(1).isEmpty ? .null : .string(s.text(1))), ("organization_id", .str(s.textOrNil(2))),
            ("application_id", .string(s.text(3))), ("status", .string(s.text(4))), ("source", .string(s.text(5))),
            ("starts_at", .time(s.intOrNil(6))), ("ends_at", .time(s.intOrNil(7))),
            ("disabled_reason", .str(s.textOrNil(8))), ("created_at", .time(s.int(9))), ("updated_at", .time(s.int(10))),
        ])
    }

    struct EntitlementRow { let json: JSON; let userId: String; let app: String; let org: String?; let status: String; let version: Int }

    func loadEntitlement(_ id: String) throws -> EntitlementRow {
        guard let e = try db.first("SELECT \(HubEngine.entitlementColumns) FROM entitlements e WHERE e.id = ?", [.text(id)], {
            EntitlementRow(json: HubEngine.entitlementJSON($0), userId: $0.text(1), app: $0.text(3), org: $0.textOrNil(2),
                           status: $0.text(4), version: $0.int(11))
        }) else { throw HubErrorReply.notFound("Entitlement \(id)") }
        return e
    }

    private func entitlementQuery(_ c: RequestContext, userId: String?) -> ListQuery {
        var q = ListQuery(from: "entitlements e", columns: HubEngine.entitlementColumns, columnCount: 12, sort: "e.created_at", seq: "e.seq")
        if let userId { q.add("e.user_id = ?", .text(userId)) } else if let u = c.q("user_id") { q.add("e.user_id = ?", .text(u)) }
        for name in ["application_id", "organization_id", "source"] {
            if let v = c.q(name) { q.add("e.\(name) = ?", .text(v)) }
        }
        if let s = c.q("status") { q.add("e.status = ?", .text(s)) } else if c.q("include_inactive") != "true" {
            q.add("e.status != 'revoked'")
        }
        return q
    }

    func userEntitlements(_ c: RequestContext) throws -> Reply {
        let id = try c.userParam(c.params[0])
        try requireReadUser(c, id)
        _ = try loadUser(id)
        return try runList(c, entitlementQuery(c, userId: id), scope: "users/\(id)/entitlements",
                           filters: HubEngine.entitlementFilters, map: HubEngine.entitlementJSON)
    }

    func listEntitlements(_ c: RequestContext) throws -> Reply {
        try c.require("users.list")
        return try runList(c, entitlementQuery(c, userId: nil), scope: "entitlements",
                           filters: HubEngine.entitlementFilters, map: HubEngine.entitlementJSON)
    }

    func getEntitlement(_ c: RequestContext) throws -> Reply {
        let e = try loadEntitlement(c.params[0])
        try requireReadUser(c, e.userId)
        return .json(200, try orgGrantJSON(e), etag: e.version)
    }

    /// `POST /users/{id}/entitlements` `{application_id, source, starts_at?, ends_at?}` → 201.
    func grant(_ c: RequestContext) throws -> Reply {
        let userId = try c.userParam(c.params[0])
        try c.require("entitlements.manage")
        _ = try loadUser(userId)
        let b = try c.body()
        var bad: [(String, String)] = []
        let app = b["application_id"]?.stringValue
        if app == nil || app!.isEmpty { bad.append(("application_id", "required")) }
        else if try db.first("SELECT 1 FROM applications WHERE id = ?", [.text(app!)], { _ in true }) == nil {
            bad.append(("application_id", "unknown"))
        }
        let source = b["source"]?.stringValue
        if source == nil { bad.append(("source", "required")) }
        else if !["admin_grant", "trial", "purchase"].contains(source!) { bad.append(("source", "invalid")) }
        func time(_ name: String) -> Int? {
            guard let v = b[name], !v.isNull else { return nil }
            guard let s = v.stringValue, let t = Time.parse(s) else { bad.append((name, "invalid")); return nil }
            return t
        }
        let starts = time("starts_at"), ends = time("ends_at")
        if let e = ends, e <= (starts ?? c.now) { bad.append(("ends_at", "before_start")) }
        if !bad.isEmpty { throw HubErrorReply.validation(bad) }
        if let existing = try db.first("""
            SELECT id FROM entitlements WHERE user_id = ? AND application_id = ? AND organization_id IS NULL
            AND status IN ('active', 'disabled')
            """, [.text(userId), .text(app!)], { $0.text(0) }) {
            throw HubErrorReply(status: 409, code: "entitlement_already_exists",
                           message: "\(userId) already holds a live entitlement to \(app!).",
                           details: [("existing_entitlement_id", .string(existing))])
        }
        let id = newId("ent_")
        try db.run("""
            INSERT INTO entitlements(id, user_id, organization_id, application_id, status, source, starts_at, ends_at,
              disabled_reason, created_at, updated_at) VALUES (?, ?, NULL, ?, 'active', ?, ?, ?, NULL, ?, ?)
            """, [.text(id), .text(userId), .text(app!), .text(source!), .int(starts ?? c.now), .opt(ends), .int(c.now), .int(c.now)])
        let row = try loadEntitlement(id)
        try audit(c, action: "entitlement.granted", target: ("entitlement", id), targetUser: userId, app: app, after: row.json)
        var r = Reply.json(201, row.json, etag: row.version)
        r.headers.append(("Location", "/entitlements/\(id)"))
        return r
    }

    /// `PATCH /entitlements/{id}` `{status, disabled_reason, ends_at, source}`: also
    /// expired → active (with a future or null `ends_at`, sent or current: `422
    /// validation_failed` `ends_at: required` or `not_in_future`) and `source` trial →
    /// purchase.
    func patchEntitlement(_ c: RequestContext) throws -> Reply {
        try c.require("entitlements.manage")
        let e = try loadEntitlement(c.params[0])
        try c.checkIfMatch(e.version)
        let b = try c.body()
        let readOnly = b.objectKeys.filter {
            ["id", "user_id", "organization_id", "application_id", "starts_at", "created_at", "updated_at"].contains($0)
        }
        if !readOnly.isEmpty { throw HubErrorReply.readOnly(readOnly) }
        let newSource = try sourceChange(b["source"], e)
        let currentScope = try storedScope(e.json["id"]!.stringValue!)
        var scopeProblems: [(String, String)] = []
        if currentScope == nil, b["member_scope"] != nil || b["member_overrides"] != nil {
            throw HubErrorReply(status: 422, code: "not_an_org_grant", message: "member_scope and member_overrides apply to organization grants only.",
                                details: [("entitlement_id", .string(e.json["id"]!.stringValue!))])
        }
        let newScope = try currentScope.flatMap { try memberScope(b, current: $0, org: e.org ?? "", bad: &scopeProblems) }
        if !scopeProblems.isEmpty { throw HubErrorReply.validation(scopeProblems) }
        let scopeChanged = newScope != nil && newScope != currentScope
        let reasonValue = b["disabled_reason"]
        if let r = reasonValue, r.stringValue == nil, !r.isNull { throw HubErrorReply.validation([("disabled_reason", "invalid")]) }
        let reason = reasonValue?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        var status = e.status, action = "entitlement.updated"
        if let sv = b["status"] {
            guard let to = sv.stringValue, ["active", "disabled", "expired", "revoked"].contains(to) else {
                throw HubErrorReply.validation([("status", "invalid")])
            }
            switch (e.status, to) {
            case ("active", "disabled"): action = "entitlement.disabled"
            case ("disabled", "active"): action = "entitlement.enabled"
            case ("active", "revoked"), ("disabled", "revoked"), ("expired", "revoked"): action = "entitlement.revoked"
            case ("expired", "active"): action = "entitlement.updated"
            default: throw HubErrorReply.invalidTransition(from: e.status, to: to)
            }
            if to != "active", reason == nil { throw HubErrorReply.validation([("disabled_reason", "required")]) }
            status = to
        }
        var endsChange: Int?? = nil
        if let ev = b["ends_at"] {
            if ev.isNull { endsChange = .some(nil) } else if let s = ev.stringValue, let t = Time.parse(s) { endsChange = .some(t) }
            else { throw HubErrorReply.validation([("ends_at", "invalid")]) }
        }
        if e.status == "expired", status == "active" {
            try checkRenewal(endsChange, current: e.json["ends_at"]?.stringValue.flatMap(Time.parse), now: c.now)
        }
        let newReason: String? = status == "active" ? nil : (reason ?? e.json["disabled_reason"]?.stringValue)
        if status == e.status, endsChange == nil, newSource == nil, !scopeChanged,
           reasonValue == nil || newReason == e.json["disabled_reason"]?.stringValue {
            return .json(200, try orgGrantJSON(e), etag: e.version)
        }
        var endsSQL = ""
        var args: [SQLValue] = [.text(status), .opt(newReason), .int(c.now)]
        if let ch = endsChange { endsSQL = ", ends_at = ?"; args.append(.opt(ch)) }
        if let newSource { endsSQL += ", source = ?"; args.append(.text(newSource)) }
        args.append(.text(e.json["id"]!.stringValue!))
        try db.run("UPDATE entitlements SET status = ?, disabled_reason = ?, updated_at = ?\(endsSQL), version = version + 1 WHERE id = ?", args)
        let id = e.json["id"]!.stringValue!
        if let scope = newScope ?? currentScope {
            if scopeChanged {
                try db.run("UPDATE org_grants SET member_scope = ?, member_overrides = ? WHERE entitlement_id = ?",
                           [.text(scope.scope), .text(scope.overrides.joined(separator: ",")), .text(id)])
                if action == "entitlement.updated" { action = "entitlement.member_scope_changed" }
            }
            try syncSeats(grant: id, org: e.org ?? "", app: e.app, status: status, scope: scope, c)
        }
        let n = try loadEntitlement(id)
        let before = try currentScope == nil ? e.json : orgGrantJSON(e, scope: currentScope)
        let after = try orgGrantJSON(n)
        try audit(c, action: action, target: ("entitlement", id), targetUser: e.userId.isEmpty ? nil : e.userId, app: e.app, org: e.org,
                  before: before, after: after)
        return .json(200, after, etag: n.version)
    }

    /// `source` in a PATCH: only trial → purchase (`422 immutable_field` otherwise); nil
    /// when absent or unchanged.
    private func sourceChange(_ value: JSON?, _ e: EntitlementRow) throws -> String? {
        guard let value else { return nil }
        let current = e.json["source"]?.stringValue ?? ""
        if value.stringValue == current { return nil }
        guard current == "trial", value.stringValue == "purchase" else {
            throw HubErrorReply(status: 422, code: "immutable_field",
                                message: "source can only change from trial to purchase; this entitlement's source is \(current).",
                                details: [("field", .string("source")), ("source", .string(current))])
        }
        return "purchase"
    }

    /// expired → active needs a future `ends_at` or none: the one sent, else the current one.
    private func checkRenewal(_ change: Int??, current: Int?, now: Int) throws {
        let ends: Int? = change ?? current
        if let ends, ends <= now { throw HubErrorReply.validation([("ends_at", change == nil ? "required" : "not_in_future")]) }
    }
}
