import SystemText
import Foundation
import HubClient
import JSONKit
import ScriptHost
import Secrets

/// `hub.api_keys.create`, `rotate` and `update` (docs/hub-api.md, "The rest of the admin API").
///
/// Results, never keys (docs/vault.md): a recipe never holds a secret. The Hub returns a
/// key's `secret` once, from create and rotate; the client splits it off the record
/// (`HubClient.createAPIKey`, a `HubOnceSecret`). These bindings, inside the send, register
/// it with `SecretRedactor`, write it into the run's vault as the entry the recipe names
/// (`{store = "hub/keys/ci"}`), and only then hand the answer — without the secret — to the
/// write coordinator, which journals it. The recipe gets the key's record with
/// `secret_stored_in = ENTRY` and `secret = <secret ENTRY>`, an opaque handle (see the
/// `vault` module). So no recipe, journal, plan, log or export holds the secret, and a
/// journal replay of a create (a resumed run) needs nothing but the entry name: the vault
/// entry was written before the journal recorded the write as done. A crash between the
/// Hub's answer and the vault write leaves the write pending; the resume resends it with
/// the same Idempotency-Key and the Hub replays its stored answer.
extension Bindings {
    static let apiKeyFields = ["name", "scope", "permissions", "mode", "intended_use", "restrict_destructive", "expires_at"]
    static let apiKeyUpdateFields = ["name", "permissions", "restrict_destructive"]
    /// The handles `secret` holds in results (one per entry name), of a kind no binding
    /// takes as a credential (`ScriptHandle.storedSecretKind`).
    static let keySecretHandles = ScriptHandleCache(kind: ScriptHandle.storedSecretKind)
    /// Where a recipe may store a new key's secret: entries below this prefix only.
    package static let keySecretPrefix = "hub/keys/"

    var apiKeyManagement: [ScriptFunction] {
        [
            fn("api_keys.get", "api_keys.manage", "hub.api_keys.get(id) -> key (never its secret)") { call, ctx in
                try ctx.get("/api-keys/\(segment(try call.id(1)))")
            },
            fn("api_keys.create", "api_keys.manage", writes: true, """
               hub.api_keys.create({name, permissions = {…}, mode = "live" or "test", scope = "platform" or an app id, intended_use?, \
               restrict_destructive?, expires_at?}, {store = VAULT_ENTRY, key?}) -> key with `secret_stored_in` and `secret` \
               (an opaque handle: the secret goes straight into the vault entry, never to the recipe). Needs a user session \
               (an API key cannot manage keys: user_token_required)
               """) { call, ctx in
                var fields = try call.fields(1)
                try Self.checkKnown(call, 1, fields, allowed: Self.apiKeyFields)
                guard let name = try call.field(fields, "name", at: 1, max: HubArgumentLimits.keyName) else {
                    throw call.argumentError(1, "field 'name' (a string) is required")
                }
                guard let perms = Self.stringList(fields["permissions"]) else {
                    throw call.argumentError(1, "field 'permissions' (a list of permission keys such as \"users.list\") is required")
                }
                fields["permissions"] = .array(perms.map(ScriptValue.string))
                guard let mode = fields["mode"]?.stringValue, mode == "live" || mode == "test" else {
                    throw call.argumentError(1, "field 'mode' (\"live\" or \"test\") is required")
                }
                if fields["scope"] == nil { fields["scope"] = "platform" }
                let store = try storeOption(call, 2, ctx)
                return try withSecretStored(ctx, call, optionsAt: 2, .post, "/api-keys", body: try call.body(fields, at: 1), store: store,
                                            summary: "create API key '\(name)' (\(mode)), secret into the vault entry \(store)",
                                            predicted: ["name": .string(name), "status": "active"], creates: CreatedID(prefix: "key"))
            },
            fn("api_keys.rotate", "api_keys.manage", writes: true, """
               hub.api_keys.rotate(id, {store = VAULT_ENTRY, key?}) -> key with `secret_stored_in` and `secret` (a handle; \
               the old secret stops working at once)
               """) { call, ctx in
                let id = try call.id(1)
                let store = try storeOption(call, 2, ctx)
                return try withSecretStored(ctx, call, optionsAt: 2, .post, "/api-keys/\(segment(id))/rotate", body: [:], rotatedID: id, store: store,
                                            summary: "rotate API key \(id), new secret into the vault entry \(store)",
                                            predicted: ["id": .string(id), "status": "active"])
            },
            fn("api_keys.update", "api_keys.manage", writes: true,
               "hub.api_keys.update(id, {name?, permissions?, restrict_destructive?}, opts) -> key (PATCH; If-Match)") { call, _ in
                let id = try call.id(1)
                let fields = try call.fields(2)
                guard !fields.isEmpty else { throw call.argumentError(2, "at least one field to change expected") }
                try Self.checkKnown(call, 2, fields, allowed: Self.apiKeyUpdateFields)
                var predicted = fields
                predicted["id"] = .string(id)
                return try write(call, optionsAt: 3, .patch, "/api-keys/\(segment(id))", body: try call.body(fields, at: 2),
                                 summary: "update API key \(id): \(fields.keys.sorted().joined(separator: ", "))",
                                 predicted: .object(predicted), stillApplies: { _ in true })
            },
        ]
    }

    /// A list of strings (an empty table counts as an empty list); nil otherwise.
    static func stringList(_ value: ScriptValue?) -> [String]? {
        switch value {
        case .array(let items)?:
            let strings = items.compactMap(\.stringValue)
            return strings.count == items.count ? strings : nil
        case .object(let fields)? where fields.isEmpty: return []
        default: return nil
        }
    }

    /// Refuses a field the endpoint does not take (a typo would be sent and refused, or
    /// worse, ignored).
    static func checkKnown(_ call: BindingCall, _ n: Int, _ fields: [String: ScriptValue], allowed: [String]) throws {
        if let unknown = fields.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw call.argumentError(n, "unknown field \(HubArgumentLimits.shown(unknown)) (fields: \(allowed.joined(separator: ", ")))")
        }
    }

    /// The `store` option at n: a vault entry name. Outside plan mode the run must have a
    /// vault to store into (checked before anything is sent).
    private func storeOption(_ call: BindingCall, _ n: Int, _ ctx: HubCall) throws -> String {
        let opts = try call.fields(n)
        guard let store = try call.field(opts, "store", at: n, max: HubArgumentLimits.id) else {
            throw call.argumentError(n, "option 'store' (the vault entry for the new secret, e.g. \"hub/keys/ci\") is required")
        }
        do { try MemorySecrets.checkName(store) } catch let error as ScriptStructuredError {
            throw call.argumentError(n, "option 'store': \(error.message)")
        }
        let parts = store.dropFirst(Self.keySecretPrefix.count).split(separator: "/", omittingEmptySubsequences: false)
        guard store.hasPrefix(Self.keySecretPrefix), !parts.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else {
            throw call.argumentError(n, "option 'store': \(HubArgumentLimits.shown(store)) is not a name under \(Self.keySecretPrefix): "
                                     + "a recipe stores the secrets of the keys it makes only there, so it cannot replace another "
                                     + "secret (a webhook's, Dispatch's, a session); e.g. \(Self.keySecretPrefix)ci-deploy")
        }
        var planning = false
        if case .plan = ctx.writes.mode { planning = true }
        if ctx.secretStore == nil, !planning {
            throw ScriptStructuredError(code: "vault_not_open", message:
                "\(call.functionName) stores the new secret in the vault, and this run has none: create one with `hubscript vault init` and give its key (HUBSCRIPT_VAULT_KEY)")
        }
        return store
    }

    /// A write whose answer holds `secret`: stored in the vault entry `store` inside the
    /// send, before the coordinator journals the answer (without it).
    private func withSecretStored(_ ctx: HubCall, _ call: BindingCall, optionsAt n: Int, _ method: HubMethod, _ path: String,
                                  body: HubJSON, rotatedID: String? = nil, store: String, summary: String,
                                  predicted: ScriptValue, creates: CreatedID? = nil) throws -> ScriptValue {
        var planned = predicted
        if case .object(var f) = predicted {
            f["secret_stored_in"] = .string(store)
            planned = .object(f)
        }
        // The entry is part of the write as journalled, planned and keyed (never sent: the
        // Hub gets `body`): an apply must store where its plan said, and a replay of the
        // same key cannot be pointed at another entry.
        var recorded = body
        if case .object(var f) = recorded { f["secret_stored_in"] = .string(store); recorded = .object(f) }
        let intent = WriteIntent(method: method.rawValue, path: path, body: CanonicalJSON(recorded), explicitKey: try call.key(n),
                                 summary: summary, predicted: planned, creates: creates)
        let client = ctx.client, secrets = ctx.secretStore
        let result = try ctx.performWrite(intent) { key in
            let issued: HubIssuedKey
            do {
                if let rotatedID { issued = try client.rotateAPIKey(id: rotatedID, idempotencyKey: key) }
                else { issued = try client.createAPIKey(body, idempotencyKey: key) }
            } catch let error as HubError where (400..<500).contains(error.status ?? 0) {
                throw RejectedWrite(error: error)
            }
            guard let secrets else { throw ScriptStructuredError(code: "vault_not_open", message: "no vault to store the secret in") }
            try issued.secret.withValue { try secrets.store($0, as: store) }
            guard case .object(var fields) = ScriptValue(issued.record) else { return ScriptValue(issued.record) }
            fields["secret_stored_in"] = .string(store)
            return .object(fields)
        }
        guard case .object(var fields) = result.value else { return result.value }
        // A replayed answer names the entry its first send stored into.
        let stored = fields["secret_stored_in"]?.stringValue ?? store
        guard stored == store else {
            throw ScriptStructuredError(code: "store_mismatch", message:
                "\(call.functionName): this write was made before with its secret stored in '\(stored)'; it cannot now be given as '\(store)'")
        }
        if !result.planned { fields["secret"] = .handle(Self.keySecretHandles.handle(store)) }
        return .object(fields)
    }
}
