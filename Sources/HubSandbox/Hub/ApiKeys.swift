import SQLiteKit
import Foundation

/// API keys: create, rotate, update (list, read and revoke are in SessionsAndKeys.swift).
///
/// Rules (docs/hub-api.md, "The rest of the admin API"): only a user token may create,
/// change or rotate a key (an API key gets `400 user_token_required`), with
/// `api_keys.manage`. A new or changed key may hold only permissions the caller holds (`403
/// role_escalation_forbidden`, `details.missing_permissions`); unknown keys are `422
/// unknown_permission`; an application-scoped key may hold only `entitlements.manage`,
/// `roles.manage`, `users.list` and `audit.view` (`422 permission_not_grantable_to_scope`).
/// The secret (`satk_<mode>_…`) is in the answer of create (201) and rotate (200) only,
/// once; rotating kills the old secret at once. `scope`, `mode` and `intended_use` are
/// fixed at creation (`422 read_only_field`). Each change writes one event:
/// `api_key.created`, `api_key.rotated`, `api_key.updated` (never with the secret).
extension HubEngine {
    static let appConfinedPermissions: Set<String> = ["entitlements.manage", "roles.manage", "users.list", "audit.view"]
    static let apiKeyNameMaxLength = 100

    /// A key's record with the fields of `api_key_details` (defaults for seeded keys).
    func apiKeyRecord(_ id: String) throws -> (json: JSON, version: Int, status: String, permissions: String, owner: String?) {
        guard let k = try db.first("SELECT \(HubEngine.keyColumns) FROM api_keys WHERE id = ?", [.text(id)], {
            (json: HubEngine.keyJSON($0), secret: $0.text(3), version: $0.int(9), status: $0.text(5), perms: $0.text(4),
             owner: $0.textOrNil(2))
        }) else { throw HubErrorReply.notFound("API key \(id)") }
        let details = try db.first("""
            SELECT scope, mode, intended_use, restrict_destructive, expires_at, created_by_type, created_by_id, rotated_at
            FROM api_key_details WHERE id = ?
            """, [.text(id)]) { s -> [(String, JSON)] in
            [("scope", .string(s.text(0))), ("mode", .string(s.text(1))), ("intended_use", .string(s.text(2))),
             ("restrict_destructive", .bool(s.bool(3))), ("expires_at", .time(s.intOrNil(4))),
             ("created_by", .object([("type", .string(s.text(5))), ("id", .string(s.text(6)))])), ("rotated_at", .time(s.intOrNil(7)))]
        } ?? [("scope", .string("platform")), ("mode", .string(k.secret.hasPrefix("satk_live_") ? "live" : "test")),
              ("intended_use", .string("service")), ("restrict_destructive", .bool(false)), ("expires_at", .null),
              ("created_by", .null), ("rotated_at", .null)]
        guard case .object(var fields) = k.json else { return (k.json, k.version, k.status, k.perms, k.owner) }
        fields += details
        fields.append(("secret_hint", .string("…" + String(k.secret.suffix(4)))))
        return (.object(fields), k.version, k.status, k.perms, k.owner)
    }

    /// Refuses API-key callers: keys are managed by people.
    private func requireUserForKeys(_ c: RequestContext) throws {
        if case .apiKey = c.who.kind {
            throw HubErrorReply(status: 400, code: "user_token_required",
                                message: "An API key cannot create, change or rotate API keys; sign in as a user with api_keys.manage.")
        }
        try c.require("api_keys.manage")
    }

    /// Checks a permission list for a key of `scope`; returns it sorted, without duplicates.
    private func checkKeyPermissions(_ value: JSON?, scope: String, _ c: RequestContext, bad: inout [(String, String)]) throws -> [String]? {
        guard let value else { bad.append(("permissions", "required")); return nil }
        guard case .array(let items) = value, items.count <= 100, items.allSatisfy({ $0.stringValue != nil }) else {
            bad.append(("permissions", "invalid")); return nil
        }
        let perms = Array(Set(items.compactMap(\.stringValue))).sorted()
        let unknown = perms.filter { !Catalog.allPermissions.contains($0) }
        if !unknown.isEmpty {
            throw HubErrorReply(status: 422, code: "unknown_permission", message: "Unknown permissions: \(unknown.joined(separator: ", ")).",
                                details: [("permissions", .array(unknown.map(JSON.string)))])
        }
        if scope != "platform" {
            let refused = perms.filter { !HubEngine.appConfinedPermissions.contains($0) }
            if !refused.isEmpty {
                throw HubErrorReply(status: 422, code: "permission_not_grantable_to_scope",
                                    message: "An application-scoped key cannot hold \(refused.joined(separator: ", ")).",
                                    details: [("permissions", .array(refused.map(JSON.string))), ("scope", .string(scope))])
            }
        }
        let missing = perms.filter { !c.who.can($0) }
        if !missing.isEmpty {
            throw HubErrorReply(status: 403, code: "role_escalation_forbidden",
                                message: "A key cannot hold permissions you lack (\(missing.joined(separator: ", "))).",
                                details: [("missing_permissions", .array(missing.map(JSON.string)))])
        }
        return perms
    }

    private static func keyName(_ value: JSON?, required: Bool, bad: inout [(String, String)]) -> String? {
        guard let value, !value.isNull else {
            if required { bad.append(("name", "required")) }
            return nil
        }
        guard let s = value.stringValue, !s.isEmpty, !hasControls(s) else { bad.append(("name", "invalid")); return nil }
        guard s.count <= apiKeyNameMaxLength else { bad.append(("name", "too_long")); return nil }
        return s
    }

    private static func newKeySecret(mode: String) -> String { "satk_\(mode)_" + randomToken(32) }

    func createApiKey(_ c: RequestContext) throws -> Reply {
        try requireUserForKeys(c)
        let b = try c.body()
        var bad: [(String, String)] = []
        let name = HubEngine.keyName(b["name"], required: true, bad: &bad)
        let scope = b["scope"]?.stringValue ?? ""
        if b["scope"] == nil { bad.append(("scope", "required")) }
        else if scope != "platform", try db.first("SELECT 1 FROM applications WHERE id = ?", [.text(scope)], { _ in true }) == nil {
            bad.append(("scope", "invalid"))
        }
        let mode = b["mode"]?.stringValue ?? ""
        if b["mode"] == nil { bad.append(("mode", "required")) } else if !["live", "test"].contains(mode) { bad.append(("mode", "invalid")) }
        var use = "service"
        if let v = b["intended_use"], !v.isNull {
            if let s = v.stringValue, ["service", "agent"].contains(s) { use = s } else { bad.append(("intended_use", "invalid")) }
        }
        var restrict = use == "agent"
        if let v = b["restrict_destructive"], !v.isNull {
            if let flag = v.boolValue { restrict = flag } else { bad.append(("restrict_destructive", "invalid")) }
        }
        var expires: Int?
        if let v = b["expires_at"], !v.isNull {
            if let s = v.stringValue, let t = Time.parse(s), t > c.now { expires = t } else { bad.append(("expires_at", "invalid")) }
        }
        if !bad.isEmpty { throw HubErrorReply.validation(bad) }
        var stillBad: [(String, String)] = []
        guard let perms = try checkKeyPermissions(b["permissions"], scope: scope, c, bad: &stillBad) else {
            throw HubErrorReply.validation(stillBad)
        }
        let id = newId("key_"), secret = HubEngine.newKeySecret(mode: mode)
        let actor = c.who.actor
        try db.run("""
            INSERT INTO api_keys(id, name, owner_user_id, secret, permissions, status, created_at) VALUES (?,?,?,?,?,'active',?)
            """, [.text(id), .text(name!), .opt(c.who.userId), .text(secret), .text(perms.joined(separator: ",")), .int(c.now)])
        try db.run("""
            INSERT INTO api_key_details(id, scope, mode, intended_use, restrict_destructive, expires_at, created_by_type, created_by_id)
            VALUES (?,?,?,?,?,?,?,?)
            """, [.text(id), .text(scope), .text(mode), .text(use), .int(restrict ? 1 : 0), .opt(expires), .text(actor.type), .text(actor.id)])
        try audit(c, action: "api_key.created", target: ("api_key", id), targetUser: c.who.userId,
                  after: .object([("name", .string(name!)), ("scope", .string(scope)), ("mode", .string(mode)),
                                  ("permissions", .array(perms.map(JSON.string)))]))
        let k = try apiKeyRecord(id)
        return .json(201, HubEngine.withSecret(k.json, secret), etag: k.version)
    }

    func rotateApiKey(_ c: RequestContext) throws -> Reply {
        try requireUserForKeys(c)
        let id = c.params[0]
        let k = try apiKeyRecord(id)
        try c.checkIfMatch(k.version)
        guard k.status == "active" else {
            throw HubErrorReply(status: 409, code: "invalid_status_transition", message: "API key \(id) is \(k.status); only an active key can be rotated.",
                                details: [("status", .string(k.status))])
        }
        let mode = k.json["mode"]?.stringValue ?? "test"
        let secret = HubEngine.newKeySecret(mode: mode)
        try db.run("UPDATE api_keys SET secret = ?, version = version + 1 WHERE id = ?", [.text(secret), .text(id)])
        try db.run("UPDATE api_key_details SET rotated_at = ? WHERE id = ?", [.int(c.now), .text(id)])
        try audit(c, action: "api_key.rotated", target: ("api_key", id), targetUser: k.owner,
                  after: .object([("secret_hint", .string("…" + String(secret.suffix(4))))]))
        let n = try apiKeyRecord(id)
        return .json(200, HubEngine.withSecret(n.json, secret), etag: n.version)
    }

    func patchApiKey(_ c: RequestContext) throws -> Reply {
        try requireUserForKeys(c)
        let id = c.params[0]
        let k = try apiKeyRecord(id)
        try c.checkIfMatch(k.version)
        let b = try c.body()
        let writable: Set<String> = ["name", "permissions", "restrict_destructive"]
        let readOnly = b.objectKeys.filter { !writable.contains($0) }
        if !readOnly.isEmpty { throw HubErrorReply.readOnly(readOnly) }
        guard k.status == "active" else {
            throw HubErrorReply(status: 409, code: "invalid_status_transition", message: "API key \(id) is \(k.status); it cannot change.",
                                details: [("status", .string(k.status))])
        }
        var bad: [(String, String)] = []
        let name = HubEngine.keyName(b["name"], required: false, bad: &bad)
        if let v = b["name"], v.isNull { bad.append(("name", "required")) }
        var restrict: Bool?
        if let v = b["restrict_destructive"] {
            if let flag = v.boolValue { restrict = flag } else { bad.append(("restrict_destructive", "invalid")) }
        }
        if !bad.isEmpty { throw HubErrorReply.validation(bad) }
        var perms: [String]?
        if b["permissions"] != nil {
            perms = try checkKeyPermissions(b["permissions"], scope: k.json["scope"]?.stringValue ?? "platform", c, bad: &bad)
            if !bad.isEmpty { throw HubErrorReply.validation(bad) }
        }
        var before: [(String, JSON)] = [], after: [(String, JSON)] = []
        if let name, name != k.json["name"]?.stringValue {
            before.append(("name", k.json["name"] ?? .null)); after.append(("name", .string(name)))
        }
        if let perms, perms.joined(separator: ",") != k.permissions {
            before.append(("permissions", k.json["permissions"] ?? .null)); after.append(("permissions", .array(perms.map(JSON.string))))
        }
        if let restrict, restrict != k.json["restrict_destructive"]?.boolValue {
            before.append(("restrict_destructive", k.json["restrict_destructive"] ?? .null)); after.append(("restrict_destructive", .bool(restrict)))
        }
        guard !after.isEmpty else { return .json(200, k.json, etag: k.version) }
        try db.run("UPDATE api_keys SET name = COALESCE(?, name), permissions = COALESCE(?, permissions), version = version + 1 WHERE id = ?",
                   [.opt(name), .opt(perms?.joined(separator: ",")), .text(id)])
        if let restrict {
            let scope = k.json["scope"]?.stringValue ?? "platform", mode = k.json["mode"]?.stringValue ?? "test"
            try db.run("""
                INSERT INTO api_key_details(id, scope, mode, intended_use, restrict_destructive, created_by_type, created_by_id)
                VALUES (?, ?, ?, 'service', ?, 'system', '') ON CONFLICT(id) DO UPDATE SET restrict_destructive = excluded.restrict_destructive
                """, [.text(id), .text(scope), .text(mode), .int(restrict ? 1 : 0)])
        }
        try audit(c, action: "api_key.updated", target: ("api_key", id), targetUser: k.owner, before: .object(before), after: .object(after))
        let n = try apiKeyRecord(id)
        return .json(200, n.json, etag: n.version)
    }

    private static func withSecret(_ json: JSON, _ secret: String) -> JSON {
        guard case .object(var fields) = json else { return json }
        fields.append(("secret", .string(secret)))
        return .object(fields)
    }
}
