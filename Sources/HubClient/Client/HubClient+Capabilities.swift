import Foundation

extension HubClient {
    /// The caller's capabilities, computed once and reused until a 403 (or
    /// `invalidateCapabilities()`) marks them stale, or `refresh` is true.
    ///
    /// User session: `/users/me`, `/users/me/roles`, `/roles?scope=platform` (403 → the
    /// seed role table gives the permissions of the roles held), `/organizations`.
    /// API key (`satk_…`, not asked `/users/me`, which only answers `user_token_required`
    /// to a key; a bearer that gets that answer is treated the same): the permissions come
    /// from, in order: the key's record `GET /api-keys/{apiKeyID}` when the profile names
    /// the key, the record can be read and it is the sent key's (its `prefix`) (with the user session of
    /// `apiKeyRecordReader`, else by the key itself, which the sandbox allows and the Hub
    /// does not); the profile's declared `apiKeyPermissions`; else they are unknown
    /// (source `.apiKeyUnknown`, no permissions: a key cannot be mapped to its record
    /// from the secret alone, and hubscript never assumes), or, when the profile chose
    /// the Hub as the only gate (`hubIsOnlyGate`), every permission is assumed (source
    /// `.apiKeyHubGate`). The server still refuses what the key lacks.
    public func capabilities(refresh: Bool = false) throws -> Capabilities {
        if !refresh, let cached = state.withLock({ $0.capabilitiesStale ? nil : $0.capabilities }) {
            return cached
        }
        let computed = try computeCapabilities()
        state.withLock { s in
            s.capabilities = computed
            s.capabilitiesStale = false
        }
        return computed
    }

    /// Marks the capabilities stale; the next `capabilities()` refetches them.
    public func invalidateCapabilities() {
        state.withLock { $0.capabilitiesStale = true }
    }

    /// Whether the next `capabilities()` call will refetch.
    public var capabilitiesAreStale: Bool { state.withLock { $0.capabilitiesStale } }

    private func computeCapabilities() throws -> Capabilities {
        // An API key (`satk_…`) is never a user token: `/users/me` would only answer
        // `user_token_required`, so a key goes straight to its own record (one request
        // saved per run, against the 100-a-minute budget). Any other bearer (a user's
        // access token given as the credential) asks `/users/me`.
        if case .apiKey(let secret) = credential, secret.hasPrefix("satk_") { return try apiKeyCapabilities() }
        let me: HubResponse
        do {
            me = try get("/users/me")
        } catch let error as HubError where error.code == HubError.Code.userTokenRequired {
            return try apiKeyCapabilities()
        }
        let user = me.json
        var roleIDs = try paginate(path: "/users/me/roles").allItems().compactMap { $0["role_id"]?.stringValue }
        if !roleIDs.contains("role_member") { roleIDs.append("role_member") }

        var permissions = Set<String>()
        var catalogVisible = true
        do {
            let catalog = try paginate(path: "/roles", query: [(name: "scope", value: "platform")]).allItems()
            for role in catalog where roleIDs.contains(role["id"]?.stringValue ?? "") {
                permissions.formUnion((role["permissions"]?.arrayValue ?? []).compactMap { $0.stringValue ?? $0["key"]?.stringValue })
            }
        } catch let error as HubError where error.status == 403 {
            catalogVisible = false
            for role in roleIDs { permissions.formUnion(Capabilities.seedRolePermissions[role] ?? []) }
        }

        let orgs = try paginate(path: "/organizations").allItems()
        return Capabilities(
            source: .userSession, permissions: permissions, roleIDs: roleIDs, roleCatalogVisible: catalogVisible,
            userID: user["id"]?.stringValue, status: user["status"]?.stringValue,
            mfaEnabled: user["mfa_enabled"]?.boolValue, emailVerified: user["email_verified"]?.boolValue,
            plan: user["plan"]?.stringValue,
            planSources: (user["plan_sources"]?.arrayValue ?? []).compactMap { $0.stringValue ?? $0["type"]?.stringValue },
            organizations: orgs.compactMap { $0["id"]?.stringValue },
            adminOfOrgs: orgs.filter { $0["my_role"]?.stringValue == "org_admin" }.compactMap { $0["id"]?.stringValue })
    }

    /// An API key's permissions: its record (when it is the record of the key sent), else
    /// the profile's declaration, else unknown (or assumed, when the Hub is the only
    /// gate); see `capabilities`.
    private func apiKeyCapabilities() throws -> Capabilities {
        var recordUnreadable: String?
        if let id = options.apiKeyID {
            do {
                let record = try options.apiKeyRecordReader?(id) ?? get("/api-keys/\(id)")
                if let other = anotherKeysRecord(record.json, id: id) {
                    recordUnreadable = other
                } else if let granted = record.json["permissions"]?.arrayValue {
                    var fromRecord = Capabilities(source: .apiKeyRecord, permissions: Set(granted.compactMap(\.stringValue)))
                    fromRecord.keyID = id
                    fromRecord.keyStatus = record.json["status"]?.stringValue
                    return fromRecord
                } else {
                    recordUnreadable = "the record of \(id) lists no permissions"
                }
            } catch let error as HubError {
                recordUnreadable = "reading the record of \(id): \(error.code)\(error.status.map { " (\($0))" } ?? ""): \(error.message)"
                // A reader's session that ended says how to start a new one.
                let signIn = [HubError.Code.sessionEnded, HubError.Code.unauthenticated, HubError.Code.sessionRevoked,
                              HubError.Code.refreshTokenReused]
                if signIn.contains(error.code) {
                    recordUnreadable! += (error.message.hasSuffix(".") ? " " : ". ") + error.hint
                }
            } catch {
                recordUnreadable = "reading the record of \(id): \(error)"
            }
        }
        if let declared = options.apiKeyPermissions {
            return Capabilities(source: .apiKeyDeclared, permissions: Set(declared))
        }
        var unknown = options.hubIsOnlyGate
            ? Capabilities(source: .apiKeyHubGate, permissions: Set(Capabilities.allPermissions))
            : Capabilities(source: .apiKeyUnknown, permissions: [])
        unknown.recordUnreadable = recordUnreadable
        return unknown
    }

    /// Why `record` (read for `api_key_id` = `id`) is not the record of the key this
    /// client sends, or nil when it is (or cannot be told: a record without `prefix`).
    /// The Hub shows the first characters of a key's secret as `prefix`; a profile whose
    /// `api_key_id` names another key (a slip when copying, a reader signed in to another
    /// Hub) must not be gated by that key's permissions. The prefix itself is not shown:
    /// it is part of a secret.
    private func anotherKeysRecord(_ record: HubJSON, id: String) -> String? {
        guard case .apiKey(let secret) = credential, let prefix = record["prefix"]?.stringValue, !prefix.isEmpty,
              !secret.hasPrefix(prefix) else { return nil }
        return "the record of \(id) is another key's (its prefix does not begin the key this profile sends): "
            + "api_key_id must name the profile's own key"
    }
}
