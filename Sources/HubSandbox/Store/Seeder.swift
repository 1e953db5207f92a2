import SQLiteKit
import Foundation

/// Seeds the fixed data of `SandboxFixtures` and deterministic generated data: the same
/// seed and the same `now` give the same rows. Everything is written in one transaction
/// through cached prepared statements, so 5,000 users and 200,000 audit events take
/// seconds, not minutes.
struct Seeder {
    let db: SQLiteDatabase
    var rng: SplitMix64
    let now: Int
    let scale: SandboxOptions.Scale
    let seed: Int
    let day = 86_400

    init(db: SQLiteDatabase, seed: Int, now: Int, scale: SandboxOptions.Scale) {
        self.db = db
        self.seed = seed
        self.rng = SplitMix64(seed: UInt64(bitPattern: Int64(seed)) &* 0x9E37_79B9 &+ 1)
        self.now = now - now % 60
        self.scale = scale
    }

    mutating func token(_ n: Int) -> String {
        let alphabet = Array("abcdefghijkmnpqrstuvwxyz23456789".utf8)
        var out = [UInt8](); out.reserveCapacity(n)
        for _ in 0..<n { out.append(alphabet[Int(rng.next() % 32)]) }
        return String(decoding: out, as: UTF8.self)
    }
    mutating func int(_ range: Range<Int>) -> Int { range.lowerBound + Int(rng.next() % UInt64(range.count)) }
    mutating func chance(_ p: Double) -> Bool { rng.unit() < p }

    /// Seeds in one transaction. With `onlyIfEmpty`, does nothing when users exist — checked
    /// inside the write transaction, so two processes opening one new file seed it once.
    mutating func run(onlyIfEmpty: Bool = false) throws {
        try db.transaction {
            if onlyIfEmpty, try db.first("SELECT 1 FROM users LIMIT 1", [], { _ in true }) != nil { return }
            try db.run("INSERT OR REPLACE INTO meta(key, value) VALUES ('seed', ?), ('schema', ?)",
                       [.text(String(seed)), .text(String(Schema.version))])
            try catalog()
            try fixed()
            try generated()
        }
    }

    private func catalog() throws {
        for r in Catalog.roles {
            try db.run("INSERT INTO roles(id, name, description, permissions) VALUES (?,?,?,?)",
                       [.text(r.id), .text(r.name), .text(r.description), .text(r.permissions.joined(separator: ","))])
        }
        let apps: [(String, String, String, String, Bool)] = [
            ("app_hub", "Hub", "internal", "free", true), ("app_invoicer", "Invoicer", "public", "standard", false),
            ("app_wiki", "Wiki", "public", "free", false), ("app_crm", "CRM", "public", "standard", false),
            ("app_analytics", "Analytics", "public", "standard", false), ("app_tickets", "Tickets", "public", "standard", false),
            ("app_chat", "Chat", "public", "free", false),
        ]
        for (i, a) in apps.enumerated() {
            try db.run("INSERT INTO applications(id, name, slug, visibility, access_tier, receives_platform_notifications, created_at) VALUES (?,?,?,?,?,?,?)",
                       [.text(a.0), .text(a.1), .text(String(a.0.dropFirst(4))), .text(a.2), .text(a.3), .int(a.4 ? 1 : 0),
                        .int(now - (900 - i) * day)])
        }
        try db.run("INSERT INTO organizations(id, name, slug, created_at) VALUES ('org_acme','Acme','acme',?), ('org_globex','Globex','globex',?)",
                   [.int(now - 850 * day), .int(now - 700 * day)])
    }

    func user(_ id: String, _ email: String, _ name: String, _ status: String, mfa: Bool, created: Int, login: Int?) throws {
        try db.run("INSERT INTO users(id, email, display_name, status, mfa_enabled, created_at, updated_at, last_login_at) VALUES (?,?,?,?,?,?,?,?)",
                   [.text(id), .text(email), .text(name), .text(status), .int(mfa ? 1 : 0), .int(created), .int(created), .opt(login)])
    }
    func member(_ org: String, _ user: String, _ role: String, _ at: Int) throws {
        try db.run("INSERT INTO org_members(organization_id, user_id, role, joined_at) VALUES (?,?,?,?)",
                   [.text(org), .text(user), .text(role), .int(at)])
    }
    func role(_ user: String, _ role: String, _ at: Int) throws {
        try db.run("INSERT INTO role_assignments(user_id, role_id, assigned_at, assigned_by_type, assigned_by_id) VALUES (?,?,?,?,?)",
                   [.text(user), .text(role), .int(at), .text("user"), .text("usr_admin")])
    }
    func entitlement(_ id: String, _ user: String, _ org: String?, _ app: String, _ status: String, _ source: String,
                     ends: Int?, reason: String?, created: Int) throws {
        try db.run("""
            INSERT INTO entitlements(id, user_id, organization_id, application_id, status, source, starts_at, ends_at,
              disabled_reason, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)
            """, [.text(id), .text(user), .opt(org), .text(app), .text(status), .text(source), .int(created), .opt(ends),
                  .opt(reason), .int(created), .int(created)])
    }
    func session(_ id: String, _ user: String, created: Int, seen: Int, revoked: Int?, agent: String, ip: String) throws {
        try db.run("INSERT INTO sessions(id, user_id, created_at, last_seen_at, expires_at, ip_address, user_agent, revoked_at) VALUES (?,?,?,?,?,?,?,?)",
                   [.text(id), .text(user), .int(created), .int(seen), .int(created + 30 * 86_400), .text(ip), .text(agent), .opt(revoked)])
    }
    func key(_ id: String, _ name: String, _ owner: String?, _ secret: String, _ perms: [String], revoked: Int?, created: Int) throws {
        try db.run("INSERT INTO api_keys(id, name, owner_user_id, secret, permissions, status, created_at, revoked_at) VALUES (?,?,?,?,?,?,?,?)",
                   [.text(id), .text(name), .opt(owner), .text(secret), .text(perms.joined(separator: ",")),
                    .text(revoked == nil ? "active" : "revoked"), .int(created), .opt(revoked)])
    }
    func event(_ id: String, _ action: String, actor: (String, String), target: (String, String), user: String?,
               app: String? = nil, org: String? = nil, after: String? = nil, ts: Int) throws {
        try db.run("""
            INSERT INTO audit_events(id, action, actor_type, actor_id, target_type, target_id, target_user_id, application_id,
              organization_id, before, after, request_id, ts) VALUES (?,?,?,?,?,?,?,?,?,NULL,?,?,?)
            """, [.text(id), .text(action), .text(actor.0), .text(actor.1), .text(target.0), .text(target.1), .opt(user),
                  .opt(app), .opt(org), .opt(after), .text("req_seed_" + String(id.dropFirst(4))), .int(ts)])
    }

    private func fixed() throws {
        let d = day, n = now
        try user("usr_admin", "admin@example.com", "Grace Admin", "active", mfa: true, created: n - 800 * d, login: n - d)
        try user("usr_support", "support@example.com", "Sam Support", "active", mfa: false, created: n - 790 * d, login: n - 2 * d)
        try user("usr_ada", "ada@example.com", "Ada Lovelace", "active", mfa: false, created: n - 780 * d, login: n - 3600)
        try member("org_acme", "usr_admin", "org_admin", n - 800 * d)
        try member("org_acme", "usr_support", "org_member", n - 790 * d)
        try member("org_acme", "usr_ada", "org_member", n - 780 * d)
        try role("usr_admin", "role_superadmin", n - 800 * d)
        try role("usr_support", "role_support", n - 790 * d)
        try role("usr_ada", "role_billing_admin", n - 120 * d)
        try entitlement("ent_ada_invoicer", "usr_ada", nil, "app_invoicer", "active", "purchase", ends: nil, reason: nil, created: n - 300 * d)
        try entitlement("ent_ada_wiki", "usr_ada", nil, "app_wiki", "active", "admin_grant", ends: nil, reason: nil, created: n - 250 * d)
        try entitlement("ent_ada_crm", "usr_ada", nil, "app_crm", "disabled", "admin_grant", ends: nil, reason: "license review", created: n - 200 * d)
        try entitlement("ent_ada_tickets", "usr_ada", "org_acme", "app_tickets", "active", "org_seat", ends: nil, reason: nil, created: n - 150 * d)
        try entitlement("ent_ada_analytics", "usr_ada", nil, "app_analytics", "expired", "trial", ends: n - 60 * d, reason: nil, created: n - 90 * d)
        try entitlement("ent_ada_chat", "usr_ada", nil, "app_chat", "revoked", "purchase", ends: nil, reason: "refunded", created: n - 400 * d)
        try session("ses_admin_1", "usr_admin", created: n - 2 * d, seen: n - d, revoked: nil, agent: "Substratal-macOS/1.4 (macOS 15)", ip: "10.0.0.2")
        try session("ses_support_1", "usr_support", created: n - 3 * d, seen: n - 2 * d, revoked: nil, agent: "Substratal-Web/1.4 (Linux)", ip: "10.0.0.3")
        try session("ses_ada_laptop", "usr_ada", created: n - 5 * d, seen: n - 3600, revoked: nil, agent: "Substratal-macOS/1.4 (macOS 15)", ip: "192.0.2.10")
        try session("ses_ada_phone", "usr_ada", created: n - 2 * d, seen: n - 7200, revoked: nil, agent: "Substratal-iOS/1.4 (iOS 26)", ip: "192.0.2.11")
        try session("ses_ada_old", "usr_ada", created: n - 20 * d, seen: n - 19 * d, revoked: n - 19 * d, agent: "Substratal-Web/1.3 (Windows)", ip: "192.0.2.12")
        try key("key_jobs", "Scheduled jobs", "usr_admin", SandboxFixtures.jobsKeySecret, Catalog.allPermissions, revoked: nil, created: n - 600 * d)
        try key("key_support_ro", "Support read-only", "usr_support", SandboxFixtures.supportKeySecret, ["users.list", "audit.view"], revoked: nil, created: n - 500 * d)
        try key("key_ops", "Operations", "usr_admin", SandboxFixtures.opsKeySecret, SandboxFixtures.opsKeyPermissions, revoked: nil, created: n - 400 * d)
        try key("key_ada_cli", "Ada's CLI", "usr_ada", SandboxFixtures.adaKeySecret, ["users.list"], revoked: nil, created: n - 100 * d)
        let admin = ("user", "usr_admin")
        try event("evt_ada_role", "role.assigned", actor: admin, target: ("role", "role_billing_admin"), user: "usr_ada",
                  after: #"{"role_id":"role_billing_admin"}"#, ts: n - 85 * d)
        try event("evt_ada_trial", "entitlement.granted", actor: admin, target: ("entitlement", "ent_ada_analytics"), user: "usr_ada",
                  app: "app_analytics", ts: n - 80 * d)
        try event("evt_ada_crm", "entitlement.disabled", actor: admin, target: ("entitlement", "ent_ada_crm"), user: "usr_ada",
                  app: "app_crm", after: #"{"status":"disabled","disabled_reason":"license review"}"#, ts: n - 30 * d)
        try event("evt_ada_session", "session.revoked", actor: ("user", "usr_ada"), target: ("session", "ses_ada_old"), user: "usr_ada",
                  ts: n - 19 * d)
        try event("evt_ada_notify", "notification.sent", actor: ("api_key", "key_jobs"), target: ("notification", "ntf_ada_welcome"),
                  user: "usr_ada", app: "app_wiki", ts: n - 10 * d)
        try db.run("""
            INSERT INTO notifications(id, application_id, user_id, title, body, category, action_url, sender_type, sender_id, created_at)
            VALUES ('ntf_ada_welcome','app_wiki','usr_ada','Welcome to Wiki','Your workspace is ready.','account.welcome',NULL,'api_key','key_jobs',?),
                   ('ntf_ada_signin','app_hub','usr_ada','New sign-in','A new sign-in from iOS.','security.new_sign_in',NULL,'system',NULL,?)
            """, [.int(n - 10 * d), .int(n - 2 * d)])
    }
}
