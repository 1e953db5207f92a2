import SQLiteKit
import Foundation

/// `GET /users/{id}/apps/{appId}/effective-permissions` (docs/hub-api.md, "The rest of the
/// admin API"): always 200 for a user and an application that exist (404 otherwise), for
/// the user themself or a caller with `users.list` or `entitlements.manage`.
///
/// `access_paths` lists every entitlement of the user to the application that is not
/// revoked (personal rows, and org seats with `member_decision: included`);
/// `entitlement_status` resolves them: `active` (one live now), `scheduled` (one starts
/// later), else the best of `disabled`, `expired`, else `none`. `allowed` is user
/// `active` and entitlement `active`. `roles` are the user's platform role ids with the
/// implicit `role_member`. `effective_permissions` holds only the application's
/// `app.<slug>.*` keys; the sandbox has no application roles, so it is always empty.
extension HubEngine {
    func effectivePermissions(_ c: RequestContext) throws -> Reply {
        let id = try c.userParam(c.params[0]), app = c.params[1]
        if !c.isSelf(id), !c.who.can("users.list"), !c.who.can("entitlements.manage") { try c.require("users.list") }
        // A deleted user is answered too (user_status deleted, not allowed): reviews cover everyone.
        let user = try loadUser(id)
        guard try db.first("SELECT 1 FROM applications WHERE id = ?", [.text(app)], { _ in true }) != nil else {
            throw HubErrorReply.notFound("Application \(app)")
        }
        var paths: [JSON] = []
        var statuses: [String] = []
        try db.query("""
            SELECT id, status, source, organization_id, starts_at, ends_at FROM entitlements
            WHERE user_id = ? AND application_id = ? AND status != 'revoked' ORDER BY created_at DESC, seq DESC
            """, [.text(id), .text(app)]) { s in
            var status = s.text(1)
            if status == "active", let ends = s.intOrNil(5), ends <= c.now { status = "expired" }
            if status == "active", let starts = s.intOrNil(4), starts > c.now { statuses.append("scheduled") } else { statuses.append(status) }
            let org = s.textOrNil(3)
            paths.append(.object([("source", .string(s.text(2))), ("entitlement_id", .string(s.text(0))), ("status", .string(status)),
                                  ("organization_id", .str(org)), ("member_decision", org == nil ? .null : .string("included"))]))
        }
        let resolved = ["active", "scheduled", "disabled", "expired"].first { statuses.contains($0) } ?? "none"
        var roles: [String] = []
        try db.query("SELECT role_id FROM role_assignments WHERE user_id = ? ORDER BY role_id", [.text(id)]) { roles.append($0.text(0)) }
        roles.append("role_member")
        let allowed = user.status == "active" && resolved == "active"
        return .json(200, .object([
            ("user_id", .string(id)), ("application_id", .string(app)), ("allowed", .bool(allowed)),
            ("user_status", .string(user.status)), ("entitlement_status", .string(resolved)),
            ("access_paths", .array(paths)), ("roles", .array(roles.map(JSON.string))),
            ("effective_permissions", .array([])), ("computed_at", .time(c.now)),
        ]))
    }
}
