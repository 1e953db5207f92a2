import Foundation

/// The generated part of the seed: users with mixed statuses and last logins spread over
/// 18 months (`LoginHistory`), memberships, roles, entitlements of every status and
/// source, sessions, API keys and audit events spread over the 90 days before `now`.
extension Seeder {
    private static let first = ["alex", "blake", "casey", "dana", "eli", "frankie", "gale", "harper", "indy", "jordan",
                                "kai", "lee", "morgan", "noor", "owen", "parker", "quinn", "riley", "sky", "taylor"]
    private static let last = ["smith", "jones", "garcia", "khan", "nguyen", "muller", "rossi", "silva", "tanaka", "okafor",
                               "ivanova", "dubois", "larsen", "kowalski", "haddad", "obrien"]
    private static let apps = ["app_invoicer", "app_wiki", "app_crm", "app_analytics", "app_tickets", "app_chat"]
    private static let actions = ["user.suspended", "user.reactivated", "user.updated", "entitlement.granted", "entitlement.disabled",
                                  "entitlement.enabled", "entitlement.revoked", "role.assigned", "role.removed", "session.revoked",
                                  "api_key.revoked", "organization.member_removed", "notification.sent"]

    mutating func generated() throws {
        let d = day
        var users: [(id: String, status: String, org: String?)] = []
        var logins = LoginHistory(seed: seed, now: now)
        for i in 0..<max(0, scale.users - 3) {
            let id = "usr_" + token(14)
            let f = Seeder.first[int(0..<Seeder.first.count)], l = Seeder.last[int(0..<Seeder.last.count)]
            let r = rng.unit()
            let status = r < 0.8 ? "active" : r < 0.88 ? "invited" : r < 0.96 ? "suspended" : "deleted"
            let created = now - int(86_400..<(720 * d))
            // The draws of the main generator stay as they were (MFA, then a recent login
            // for active users), so every other generated row keeps its value.
            let mfa = chance(0.3)
            let recent = status == "active" ? now - int(600..<(30 * d)) : now
            let login = logins.lastLogin(status: status, created: created, recent: recent)
            try user(id, "\(f).\(l).\(i)@example.com", "\(f.capitalized) \(l.capitalized)", status, mfa: mfa,
                     created: created, login: login.at)
            let org: String? = chance(0.5) ? "org_acme" : chance(0.4) ? "org_globex" : nil
            if let org { try member(org, id, chance(0.05) ? "org_admin" : "org_member", created + int(0..<d)) }
            let r2 = rng.unit()
            if r2 < 0.01 { try role(id, "role_superadmin", created + d) }
            else if r2 < 0.04 { try role(id, "role_support", created + d) }
            else if r2 < 0.07 { try role(id, "role_billing_admin", created + d) }
            try entitlements(for: id, org: org, created: created)
            if status == "active" {
                for _ in 0..<int(0..<3) {
                    var start = now - int(3600..<(25 * d))
                    let sessionId = "ses_" + token(14), seen = int(0..<3600), revoked = chance(0.2)
                    let agent = chance(0.5) ? "Substratal-Web/1.4 (Linux)" : "Substratal-iOS/1.4 (iOS 26)", ip = "198.51.100.\(int(1..<255))"
                    // A session begins with a login: none for a user who never logged in,
                    // and none after the last login (those of a dormant user have expired).
                    guard let last = login.at else { continue }
                    if login.cohort == .lapsing || login.cohort == .dormant {
                        start = last - (now - start) % max(1, min(25 * d, last - created))
                    }
                    try session(sessionId, id, created: start, seen: start + seen, revoked: revoked ? start + 3600 : nil, agent: agent, ip: ip)
                }
            }
            users.append((id, status, org))
        }
        let owners = ["usr_admin", "usr_support"] + users.prefix(20).map(\.id)
        for i in 0..<min(12, max(1, users.count / 10)) {
            let perms = Array(Catalog.allPermissions.shuffled(using: &rng).prefix(int(1..<5))).sorted()
            try key("key_" + token(14), "Integration \(i + 1)", owners[int(0..<owners.count)], "satk_test_" + token(32), perms,
                    revoked: chance(0.3) ? now - int(d..<(60 * d)) : nil, created: now - int(60 * d..<(400 * d)))
        }
        try auditEvents(users.map(\.id))
    }

    private mutating func entitlements(for id: String, org: String?, created: Int) throws {
        var pool = Seeder.apps
        for _ in 0..<int(0..<4) {
            let app = pool.remove(at: int(0..<pool.count))
            let r = rng.unit()
            let status = r < 0.65 ? "active" : r < 0.75 ? "disabled" : r < 0.9 ? "expired" : "revoked"
            var source = ["purchase", "trial", "admin_grant", "org_seat"][int(0..<4)]
            if source == "org_seat", org == nil { source = "purchase" }
            let d = day, at = created + int(0..<(30 * d))
            try entitlement("ent_" + token(14), id, source == "org_seat" ? org : nil, app, status, source,
                            ends: status == "expired" || source == "trial" ? at + 30 * d : nil,
                            reason: status == "disabled" ? "policy" : status == "revoked" ? "offboarded" : nil,
                            created: min(at, now - 60))
        }
    }

    private mutating func auditEvents(_ users: [String]) throws {
        guard !users.isEmpty else { return }
        let d = day
        let actors = [("user", "usr_admin"), ("user", "usr_support"), ("api_key", "key_jobs")]
        for _ in 0..<scale.auditEvents {
            let action = Seeder.actions[int(0..<Seeder.actions.count)]
            let user = users[int(0..<users.count)]
            let kind = String(action.prefix { $0 != "." })
            let target: (String, String)
            var app: String?
            switch kind {
            case "entitlement": target = ("entitlement", "ent_" + token(14)); app = Seeder.apps[int(0..<Seeder.apps.count)]
            case "role": target = ("role", ["role_support", "role_billing_admin"][int(0..<2)])
            case "session": target = ("session", "ses_" + token(14))
            case "api_key": target = ("api_key", "key_" + token(14))
            case "organization": target = ("organization", "org_acme")
            case "notification": target = ("notification", "ntf_" + token(14)); app = "app_hub"
            default: target = ("user", user)
            }
            try event("evt_" + token(18), action, actor: actors[int(0..<actors.count)], target: target, user: user, app: app,
                      org: kind == "organization" ? "org_acme" : nil, ts: now - int(60..<(90 * d)))
        }
    }
}
