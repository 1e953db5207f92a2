import SQLiteKit
import Foundation

/// Users: create or invite, re-send an invitation, delete (soft), and the GDPR export.
///
/// - `POST /users` `{email, display_name?, status?: invited|active, send_invitation?}` →
///   201 with the user (`users.manage`; rate class "user creation", 20 a minute).
///   The email is stored lower-cased; one already held (by any user, deleted ones
///   included) is `409 email_taken` with `details.existing_user_id`. Writes `user.created`.
/// - `POST /users/{id}/invitation` → 202 without a body, only while the user is
///   `invited` (else `409 invalid_status_transition`). Writes `user.invitation_resent`
///   (the invitation count is a change).
/// - `DELETE /users/{id}` → 204 (`users.manage`, or the user themself; If-Match): status
///   `deleted`, every live session revoked, one `user.deleted` event; afterwards
///   `GET /users/{id}`, a second DELETE, the invitation and the export answer `404
///   not_found` (other writes refuse a deleted user by its status).
/// - `GET /users/{id}/export` (`users.manage` or self; at most 5 per user per day when
///   limits are standard) → the Hub's `UserExport` bundle (docs/hub-api.md). It
///   never holds a secret (no API key secret, token or password).
extension HubEngine {
    /// The Hub's field limits (docs/hub-api.md, "Client rules").
    static let emailMaxLength = 254
    static let displayNameMaxLength = 100

    func createUser(_ c: RequestContext) throws -> Reply {
        try c.require("users.manage")
        let b = try c.body()
        var bad: [(String, String)] = []
        let email = b["email"]?.stringValue?.lowercased() ?? ""
        if b["email"] == nil || b["email"]!.isNull { bad.append(("email", "required")) }
        else if !HubEngine.isEmail(email) { bad.append(("email", email.utf8.count > HubEngine.emailMaxLength ? "too_long" : "invalid_format")) }
        var name: String?
        if let v = b["display_name"], !v.isNull {
            if let s = v.stringValue, (1...HubEngine.displayNameMaxLength).contains(s.count), !HubEngine.hasControls(s) { name = s }
            else { bad.append(("display_name", (v.stringValue?.count ?? 0) > HubEngine.displayNameMaxLength ? "too_long" : "invalid")) }
        }
        var status = "invited"
        if let v = b["status"], !v.isNull {
            if let s = v.stringValue, ["invited", "active"].contains(s) { status = s } else { bad.append(("status", "invalid")) }
        }
        var sendInvitation = true
        if let v = b["send_invitation"], !v.isNull {
            if let flag = v.boolValue { sendInvitation = flag } else { bad.append(("send_invitation", "invalid")) }
        }
        if !bad.isEmpty { throw HubErrorReply.validation(bad) }
        if let existing = try db.first("SELECT id FROM users WHERE email = ?", [.text(email)], { $0.text(0) }) {
            throw HubErrorReply(status: 409, code: "email_taken", message: "A user with the email \(email) already exists.",
                                details: [("existing_user_id", .string(existing))])
        }
        let id = newId("usr_")
        let display = name ?? String(email.prefix { $0 != "@" })
        try db.run("""
            INSERT INTO users(id, email, display_name, status, mfa_enabled, created_at, updated_at, last_login_at)
            VALUES (?, ?, ?, ?, 0, ?, ?, NULL)
            """, [.text(id), .text(email), .text(display), .text(status), .int(c.now), .int(c.now)])
        let invited = status == "invited" && sendInvitation
        if invited {
            try db.run("INSERT INTO user_invitations(user_id, sent_count, last_sent_at) VALUES (?, 1, ?)", [.text(id), .int(c.now)])
        }
        let u = try loadUser(id)
        try audit(c, action: "user.created", target: ("user", id), targetUser: id,
                  after: .object([("email", .string(email)), ("status", .string(status)), ("invitation_sent", .bool(invited))]))
        var r = Reply.json(201, u.json, etag: u.version)
        r.headers.append(("Location", "/users/\(id)"))
        return r
    }

    func resendInvitation(_ c: RequestContext) throws -> Reply {
        let id = try c.userParam(c.params[0])
        try c.require("users.manage")
        let u = try loadLiveUser(id)
        guard u.status == "invited" else {
            throw HubErrorReply(status: 409, code: "invalid_status_transition",
                                message: "Only an invited user has an invitation to re-send; \(id) is \(u.status).",
                                details: [("status", .string(u.status))])
        }
        let sent = try db.first("SELECT sent_count FROM user_invitations WHERE user_id = ?", [.text(id)], { $0.int(0) }) ?? 0
        try db.run("""
            INSERT INTO user_invitations(user_id, sent_count, last_sent_at) VALUES (?, 1, ?)
            ON CONFLICT(user_id) DO UPDATE SET sent_count = sent_count + 1, last_sent_at = excluded.last_sent_at
            """, [.text(id), .int(c.now)])
        try audit(c, action: "user.invitation_resent", target: ("user", id), targetUser: id,
                  after: .object([("invitations_sent", .int(sent + 1))]))
        return Reply(status: 202, body: nil)
    }

    func deleteUser(_ c: RequestContext) throws -> Reply {
        let id = try c.userParam(c.params[0])
        if !c.isSelf(id) { try c.require("users.manage") }
        let u = try loadLiveUser(id)
        try c.checkIfMatch(u.version)
        try db.run("UPDATE users SET status = 'deleted', updated_at = ?, version = version + 1 WHERE id = ?", [.int(c.now), .text(id)])
        let revoked = try db.run("UPDATE sessions SET revoked_at = ?, version = version + 1 WHERE user_id = ? AND revoked_at IS NULL",
                                 [.int(c.now), .text(id)])
        try audit(c, action: "user.deleted", target: ("user", id), targetUser: id,
                  before: .object([("status", .string(u.status))]),
                  after: .object([("status", .string("deleted")), ("sessions_revoked", .int(revoked))]))
        return Reply(status: 204, body: nil, headers: [("ETag", "W/\"\(u.version + 1)\"")])
    }

    /// The user `id` unless deleted: a deleted user is `404 not_found` to single-user
    /// endpoints (lists still show them with `status=deleted`).
    func loadLiveUser(_ id: String) throws -> UserRow {
        let u = try loadUser(id)
        guard u.status != "deleted" else { throw HubErrorReply.notFound("User \(id)") }
        return u
    }

    func exportUser(_ c: RequestContext) throws -> Reply {
        let id = try c.userParam(c.params[0])
        if !c.isSelf(id) { try c.require("users.manage") }
        let u = try loadLiveUser(id)
        let o = limiter.take("export:\(id)", capacity: 5, window: 86_400, now: options.clock.now().timeIntervalSince1970)
        if !o.allowed { throw HubErrorReply.rateLimited(retryAfter: o.retryAfter) }
        return .json(200, try exportBundle(u, id: id, now: c.now))
    }

    private func exportBundle(_ u: UserRow, id: String, now: Int) throws -> JSON {
        let mfa = u.json["mfa_enabled"] ?? .bool(false)
        var sessions: [JSON] = []
        try db.query("SELECT id, created_at, last_seen_at, expires_at, ip_address, user_agent, revoked_at FROM sessions WHERE user_id = ? ORDER BY created_at DESC, seq DESC",
                     [.text(id)]) { s in
            sessions.append(.object([
                ("id", .string(s.text(0))), ("created_at", .time(s.int(1))), ("last_seen_at", .time(s.int(2))),
                ("expires_at", .time(s.int(3))), ("ip_address", .str(s.textOrNil(4))), ("user_agent", .str(s.textOrNil(5))),
                ("revoked_at", .time(s.intOrNil(6))),
            ]))
        }
        var orgs: [JSON] = []
        try db.query("SELECT organization_id, role, joined_at FROM org_members WHERE user_id = ? ORDER BY joined_at DESC, seq DESC",
                     [.text(id)]) { s in
            orgs.append(.object([("organization_id", .string(s.text(0))), ("role", .string(s.text(1))), ("joined_at", .time(s.int(2)))]))
        }
        var roles: [JSON] = []
        try db.query("SELECT role_id, assigned_at, assigned_by_type, assigned_by_id FROM role_assignments WHERE user_id = ? ORDER BY assigned_at DESC, seq DESC",
                     [.text(id)]) { s in
            roles.append(.object([
                ("user_id", .string(id)), ("role_id", .string(s.text(0))), ("assigned_at", .time(s.int(1))),
                ("assigned_by", .object([("type", .string(s.text(2))), ("id", .str(s.textOrNil(3)))])), ("implicit", .bool(false)),
            ]))
        }
        roles.append(.object([("user_id", .string(id)), ("role_id", .string("role_member")), ("assigned_at", .null),
                              ("assigned_by", .null), ("implicit", .bool(true))]))
        var apps: [JSON] = []
        try db.query("SELECT \(HubEngine.entitlementColumns) FROM entitlements e WHERE e.user_id = ? ORDER BY e.created_at DESC, e.seq DESC",
                     [.text(id)]) { s in
            apps.append(.object([("application_id", .string(s.text(3))), ("entitlement", HubEngine.entitlementJSON(s)),
                                 ("app_profile", .null), ("app_settings", .object([("overrides", .object([]))]))]))
        }
        var events: [JSON] = []
        try db.query("SELECT \(HubEngine.auditColumns) FROM audit_events WHERE target_user_id = ? ORDER BY ts DESC, seq DESC LIMIT 1000",
                     [.text(id)]) { events.append(HubEngine.auditJSON($0)) }
        return .object([
            ("exported_at", .time(now)),
            ("user", u.json),
            ("profile", .object([("user_id", .string(id)), ("display_name", .string(u.name)), ("avatar_url", .null),
                                 ("contact_email", .null), ("contact_phone", .null), ("locale", .string("en")),
                                 ("updated_at", u.json["updated_at"] ?? .null)])),
            ("settings", .object([("user_id", .string(id)), ("locale", .string("en")), ("timezone", .string("UTC")),
                                  ("theme", .string("system")), ("notifications", .object([]))])),
            ("identities", .array([.object([("method", .string("password")), ("mfa_enabled", mfa),
                                            ("last_used_at", u.json["last_login_at"] ?? .null)])])),
            ("sessions", .array(sessions)),
            ("organizations", .array(orgs)),
            ("roles", .array(roles)),
            ("applications", .array(apps)),
            ("audit_events", .array(events)),
        ])
    }

    /// An email as the sandbox accepts it: one `@` with text on both sides, a dot in the
    /// domain, no spaces or control characters, at most 254 bytes.
    static func isEmail(_ s: String) -> Bool {
        guard s.utf8.count <= emailMaxLength, !hasControls(s), !s.contains(" ") else { return false }
        let parts = s.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !parts[1].hasPrefix("."), !parts[1].hasSuffix(".") else {
            return false
        }
        return true
    }

    /// Whether `s` holds a control character (NUL included).
    static func hasControls(_ s: String) -> Bool { s.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F } }
}
