import SQLiteKit
import Foundation

/// Sessions and API keys. Revoked/expired sessions and revoked keys are terminal and
/// hidden from lists unless `status` or `include_inactive=true`. Revoking something
/// already revoked answers 204 without a new event.
extension HubEngine {
    func userSessions(_ c: RequestContext) throws -> Reply {
        let id = try c.userParam(c.params[0])
        try requireReadUser(c, id)
        _ = try loadUser(id)
        var q = ListQuery(from: "sessions", columns: "id, created_at, last_seen_at, expires_at, ip_address, user_agent, revoked_at",
                          columnCount: 7, sort: "created_at", seq: "seq")
        q.add("user_id = ?", .text(id))
        let status = c.q("status")
        if status == "active" || (status == nil && c.q("include_inactive") != "true") {
            q.add("revoked_at IS NULL AND expires_at > ?", .int(c.now))
        } else if status == "revoked" { q.add("revoked_at IS NOT NULL") }
        let current = c.who.sessionId
        let now = c.now
        return try runList(c, q, scope: "users/\(id)/sessions", filters: ["status", "include_inactive"]) { s in
            let revoked = s.intOrNil(6)
            let state = revoked != nil ? "revoked" : (s.int(3) <= now ? "expired" : "active")
            return .object([
                ("id", .string(s.text(0))), ("created_at", .time(s.int(1))), ("last_seen_at", .time(s.int(2))),
                ("expires_at", .time(s.int(3))), ("ip_address", .str(s.textOrNil(4))), ("user_agent", .str(s.textOrNil(5))),
                ("current", .bool(s.text(0) == current)), ("status", .string(state)), ("revoked_at", .time(revoked)),
            ])
        }
    }

    func revokeSession(_ c: RequestContext) throws -> Reply {
        let id = try c.userParam(c.params[0]), sid = c.params[1]
        try c.require("users.manage")
        guard let row = try db.first("SELECT revoked_at, version FROM sessions WHERE id = ? AND user_id = ?", [.text(sid), .text(id)], {
            (revoked: $0.intOrNil(0), version: $0.int(1))
        }) else { throw HubErrorReply.notFound("Session \(sid) of \(id)") }
        try c.checkIfMatch(row.version)
        guard row.revoked == nil else { return Reply(status: 204, body: nil, headers: [("ETag", "W/\"\(row.version)\"")]) }
        try db.run("UPDATE sessions SET revoked_at = ?, version = version + 1 WHERE id = ?", [.int(c.now), .text(sid)])
        try audit(c, action: "session.revoked", target: ("session", sid), targetUser: id, after: .object([("reason", .string("admin"))]))
        return Reply(status: 204, body: nil, headers: [("ETag", "W/\"\(row.version + 1)\"")])
    }

    static let keyColumns = "id, name, owner_user_id, secret, permissions, status, created_at, last_used_at, revoked_at, version"

    /// A key as listed: never the secret, only its first 14 characters as `prefix`.
    static func keyJSON(_ s: Statement) -> JSON {
        .object([
            ("id", .string(s.text(0))), ("name", .string(s.text(1))), ("owner_user_id", .str(s.textOrNil(2))),
            ("prefix", .string(String(s.text(3).prefix(14)))),
            ("permissions", .array(s.text(4).split(separator: ",").map { .string(String($0)) })),
            ("status", .string(s.text(5))), ("created_at", .time(s.int(6))), ("last_used_at", .time(s.intOrNil(7))),
            ("revoked_at", .time(s.intOrNil(8))),
        ])
    }

    func listApiKeys(_ c: RequestContext) throws -> Reply {
        try c.require("api_keys.manage")
        var q = ListQuery(from: "api_keys", columns: HubEngine.keyColumns, columnCount: 10, sort: "created_at", seq: "seq")
        if let o = c.q("owner_user_id") { q.add("owner_user_id = ?", .text(o)) }
        if let s = c.q("status") { q.add("status = ?", .text(s)) } else if c.q("include_inactive") != "true" {
            q.add("status != 'revoked'")
        }
        return try runList(c, q, scope: "api-keys", filters: ["owner_user_id", "status", "include_inactive"], map: HubEngine.keyJSON)
    }

    /// A key may read its own record without `api_keys.manage` *(sandbox)*, so a client can
    /// learn an API key's permissions; other keys need `api_keys.manage`.
    func getApiKey(_ c: RequestContext) throws -> Reply {
        if c.who.kind != .apiKey(keyId: c.params[0]) { try c.require("api_keys.manage") }
        guard let k = try db.first("SELECT \(HubEngine.keyColumns) FROM api_keys WHERE id = ?", [.text(c.params[0])], {
            (json: HubEngine.keyJSON($0), version: $0.int(9))
        }) else { throw HubErrorReply.notFound("API key \(c.params[0])") }
        return .json(200, k.json, etag: k.version)
    }

    func revokeApiKey(_ c: RequestContext) throws -> Reply {
        try c.require("api_keys.manage")
        let id = c.params[0]
        guard let k = try db.first("SELECT status, version, owner_user_id FROM api_keys WHERE id = ?", [.text(id)], {
            (status: $0.text(0), version: $0.int(1), owner: $0.textOrNil(2))
        }) else { throw HubErrorReply.notFound("API key \(id)") }
        try c.checkIfMatch(k.version)
        guard k.status != "revoked" else { return Reply(status: 204, body: nil, headers: [("ETag", "W/\"\(k.version)\"")]) }
        try db.run("UPDATE api_keys SET status = 'revoked', revoked_at = ?, version = version + 1 WHERE id = ?", [.int(c.now), .text(id)])
        try audit(c, action: "api_key.revoked", target: ("api_key", id), targetUser: k.owner,
                  before: .object([("status", .string(k.status))]), after: .object([("status", .string("revoked"))]))
        return Reply(status: 204, body: nil, headers: [("ETag", "W/\"\(k.version + 1)\"")])
    }
}
