import SQLiteKit
import Foundation
import HTTPKit

/// Authentication and the auth endpoints (sandbox shapes of docs/hub-api.md).
///
/// Access tokens (`sat_…`) live 15 min by the injected clock; refresh tokens (`srt_…`)
/// rotate on every refresh, and presenting a rotated one revokes the whole session
/// (`401 refresh_token_reused`) and puts a `security.session_reuse_detected` alert in
/// the user's inbox. Sessions live 30 days. Any password is accepted for an
/// active user; MFA users get an `mfa_token` (`mfa_…`, 300 s) redeemed with code
/// `123456`. Login and refresh write no audit event; revocations do.
extension HubEngine {
    static let accessTTL = 900
    static let sessionTTL = 30 * 86_400
    static let mfaCode = "123456"

    /// Resolves the bearer token: 401 `unauthenticated` (missing, unknown, expired,
    /// revoked key) or `session_revoked`.
    func authenticate(_ r: HTTPRequestMessage, now: Int) throws -> Caller {
        guard let h = r.headers["Authorization"], h.hasPrefix("Bearer ") || h.hasPrefix("bearer ") else {
            throw HubErrorReply.unauthenticated("Send Authorization: Bearer <access token or API key>.")
        }
        let token = ASCII.trimmingWhitespace(h.dropFirst(7))
        if token.hasPrefix("satk_") {
            guard let key = try db.first("SELECT id, permissions, status FROM api_keys WHERE secret = ?", [.text(token)], {
                (id: $0.text(0), perms: $0.text(1), status: $0.text(2))
            }), key.status == "active" else {
                throw HubErrorReply.unauthenticated("The API key is unknown or revoked.")
            }
            return Caller(kind: .apiKey(keyId: key.id), userId: nil, permissions: permissions(key.perms))
        }
        guard let row = try db.first("""
            SELECT a.session_id, a.expires_at, s.user_id, s.revoked_at, s.expires_at
            FROM access_tokens a JOIN sessions s ON s.id = a.session_id WHERE a.token = ?
            """, [.text(token)], { (sid: $0.text(0), exp: $0.int(1), user: $0.text(2), revoked: $0.intOrNil(3), sexp: $0.int(4)) })
        else { throw HubErrorReply.unauthenticated("The access token is unknown.") }
        if row.revoked != nil {
            throw HubErrorReply(status: 401, code: "session_revoked", message: "This session was revoked; sign in again.")
        }
        guard row.exp > now, row.sexp > now else {
            throw HubErrorReply.unauthenticated("The access token expired; refresh it.")
        }
        return Caller(kind: .user(sessionId: row.sid), userId: row.user, permissions: try userPermissions(row.user))
    }

    static func permissionSet(_ csv: String) -> Set<String> {
        Set(csv.split(separator: ",").map(String.init))
    }

    /// `permissionSet(csv)`, memoized: the same few permission lists come back on every
    /// request. At most 256 entries are kept.
    func permissions(_ csv: String) -> Set<String> {
        if let known = permissionCache[csv] { return known }
        if permissionCache.count >= 256 { permissionCache.removeAll() }
        let set = HubEngine.permissionSet(csv)
        permissionCache[csv] = set
        return set
    }

    /// The union of the permissions of the user's roles.
    func userPermissions(_ userId: String) throws -> Set<String> {
        var perms = Set<String>()
        try db.query("SELECT r.permissions FROM role_assignments a JOIN roles r ON r.id = a.role_id WHERE a.user_id = ?",
                     [.text(userId)]) { perms.formUnion(permissions($0.text(0))) }
        return perms
    }

    func login(_ c: RequestContext) throws -> Reply {
        let b = try c.body()
        var missing: [(String, String)] = []
        if (b["email"]?.stringValue ?? "").isEmpty { missing.append(("email", "required")) }
        if (b["password"]?.stringValue ?? "").isEmpty { missing.append(("password", "required")) }
        if !missing.isEmpty { throw HubErrorReply.validation(missing) }
        let email = b["email"]!.stringValue!.lowercased()
        guard let user = try db.first("SELECT id, status, mfa_enabled FROM users WHERE email = ?", [.text(email)], {
            (id: $0.text(0), status: $0.text(1), mfa: $0.bool(2))
        }), user.status == "active" else {
            throw HubErrorReply.unauthenticated("Wrong email or password, or the account is not active.")
        }
        if user.mfa {
            let token = "mfa_" + HubEngine.randomToken(32)
            try db.run("INSERT INTO mfa_challenges(token, user_id, expires_at) VALUES (?, ?, ?)",
                       [.text(token), .text(user.id), .int(c.now + 300)])
            return .json(200, .object([("mfa_required", .bool(true)), ("mfa_token", .string(token)), ("expires_in", .int(300))]))
        }
        return try startSession(user.id, c)
    }

    func mfaVerify(_ c: RequestContext) throws -> Reply {
        let b = try c.body()
        guard let token = b["mfa_token"]?.stringValue, !token.isEmpty else { throw HubErrorReply.validation([("mfa_token", "required")]) }
        guard let code = b["code"]?.stringValue, !code.isEmpty else { throw HubErrorReply.validation([("code", "required")]) }
        guard let userId = try db.first("SELECT user_id FROM mfa_challenges WHERE token = ? AND expires_at > ?",
                                        [.text(token), .int(c.now)], { $0.text(0) }) else {
            throw HubErrorReply.unauthenticated("The MFA token is unknown or expired; sign in again.")
        }
        guard code == HubEngine.mfaCode else { throw HubErrorReply.validation([("code", "invalid")]) }
        try db.run("DELETE FROM mfa_challenges WHERE token = ?", [.text(token)])
        return try startSession(userId, c)
    }

    private func startSession(_ userId: String, _ c: RequestContext) throws -> Reply {
        let sid = newId("ses_")
        try db.run("""
            INSERT INTO sessions(id, user_id, created_at, last_seen_at, expires_at, ip_address, user_agent)
            VALUES (?, ?, ?, ?, ?, '127.0.0.1', ?)
            """, [.text(sid), .text(userId), .int(c.now), .int(c.now), .int(c.now + HubEngine.sessionTTL),
                  .opt(c.request.headers["User-Agent"])])
        try db.run("UPDATE users SET last_login_at = ? WHERE id = ?", [.int(c.now), .text(userId)])
        return try issueTokens(session: sid, userId: userId, c)
    }

    private func issueTokens(session sid: String, userId: String, _ c: RequestContext) throws -> Reply {
        let access = "sat_" + HubEngine.randomToken(32)
        let refresh = "srt_" + HubEngine.randomToken(40)
        try db.run("INSERT INTO access_tokens(token, session_id, expires_at) VALUES (?, ?, ?)",
                   [.text(access), .text(sid), .int(c.now + HubEngine.accessTTL)])
        try db.run("INSERT INTO refresh_tokens(token, session_id) VALUES (?, ?)", [.text(refresh), .text(sid)])
        return .json(200, .object([
            ("access_token", .string(access)), ("refresh_token", .string(refresh)), ("token_type", .string("Bearer")),
            ("expires_in", .int(HubEngine.accessTTL)), ("session_id", .string(sid)), ("user_id", .string(userId)),
        ]))
    }

    func refresh(_ c: RequestContext) throws -> Reply {
        guard let token = try c.body()["refresh_token"]?.stringValue, !token.isEmpty else {
            throw HubErrorReply.validation([("refresh_token", "required")])
        }
        guard let row = try db.first("""
            SELECT r.session_id, r.used, s.user_id, s.revoked_at, s.expires_at
            FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id WHERE r.token = ?
            """, [.text(token)], { (sid: $0.text(0), used: $0.bool(1), user: $0.text(2), revoked: $0.intOrNil(3), exp: $0.int(4)) })
        else { throw HubErrorReply.unauthenticated("The refresh token is unknown; sign in again.") }
        let o = limiter.take("refresh:" + row.sid, capacity: 30, window: 60, now: options.clock.now().timeIntervalSince1970)
        c.classRate = o
        if !o.allowed { throw HubErrorReply.rateLimited(retryAfter: o.retryAfter) }
        if row.used {
            if row.revoked == nil {
                try db.run("UPDATE sessions SET revoked_at = ?, version = version + 1 WHERE id = ?", [.int(c.now), .text(row.sid)])
                try audit(c, action: "session.revoked", target: ("session", row.sid), targetUser: row.user,
                          after: .object([("reason", .string("refresh_token_reused"))]), actor: ("system", nil))
                try notifySessionReuse(user: row.user, session: row.sid, c)
            }
            // Returned, not thrown, so the revocation commits.
            return HubErrorReply(status: 401, code: "refresh_token_reused",
                            message: "This refresh token was already used; the session is revoked. Sign in again.").reply
        }
        if row.revoked != nil {
            throw HubErrorReply(status: 401, code: "session_revoked", message: "This session was revoked; sign in again.")
        }
        guard row.exp > c.now else { throw HubErrorReply.unauthenticated("The session expired; sign in again.") }
        try db.run("UPDATE refresh_tokens SET used = 1 WHERE token = ?", [.text(token)])
        try db.run("UPDATE sessions SET last_seen_at = ? WHERE id = ?", [.int(c.now), .text(row.sid)])
        return try issueTokens(session: row.sid, userId: row.user, c)
    }

    /// The `security.session_reuse_detected` alert in the user's inbox (from `app_hub`,
    /// sent by the system) when a rotated refresh token came back and the session was
    /// revoked for it.
    private func notifySessionReuse(user: String, session sid: String, _ c: RequestContext) throws {
        try db.run("""
            INSERT INTO notifications(id, application_id, user_id, title, body, category, action_url, sender_type, sender_id, created_at)
            VALUES (?, 'app_hub', ?, 'Session ended for your security', ?, 'security.session_reuse_detected', NULL, 'system', NULL, ?)
            """, [.text(newId("ntf_")), .text(user),
                  .text("A sign-in token was used twice, so session \(sid) was signed out. If this was not you, change your password."),
                  .int(c.now)])
    }

    /// `{all_sessions}`: revokes the caller's session, or all of the user's sessions;
    /// one `session.revoked` event either way.
    func logout(_ c: RequestContext) throws -> Reply {
        guard let sid = c.who.sessionId, let uid = c.who.userId else { throw HubErrorReply.userTokenRequired() }
        let all = try c.body()["all_sessions"]?.boolValue ?? false
        if all {
            let n = try db.run("UPDATE sessions SET revoked_at = ?, version = version + 1 WHERE user_id = ? AND revoked_at IS NULL",
                               [.int(c.now), .text(uid)])
            try audit(c, action: "session.revoked", target: ("user", uid), targetUser: uid,
                      after: .object([("reason", .string("logout_all")), ("sessions_revoked", .int(n))]))
        } else {
            try db.run("UPDATE sessions SET revoked_at = ?, version = version + 1 WHERE id = ? AND revoked_at IS NULL",
                       [.int(c.now), .text(sid)])
            try audit(c, action: "session.revoked", target: ("session", sid), targetUser: uid,
                      after: .object([("reason", .string("logout"))]))
        }
        return .noContent
    }
}
