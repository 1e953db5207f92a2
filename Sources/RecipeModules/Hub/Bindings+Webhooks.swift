import Foundation
import HubClient
import JSONKit
import ScriptHost

/// `hub.webhooks.*` (docs/webhooks.md), gated by `webhooks.manage`.
///
/// Results, never keys (docs/vault.md): a recipe never holds a secret. The Hub returns a
/// subscription's `signing_secret` only from create and rotate-secret; these bindings take
/// it out of the response before the write is journalled or returned, so no recipe,
/// journal, plan or log ever holds it. The result says `signing_secret_withheld = true`.
/// `hubscript listen --setup TRIGGER` creates (or rotates) the trigger's webhook and writes
/// the secret straight into the vault entry the trigger names (docs/webhooks.md).
extension Bindings {
    static let deliveryFilters = ["event_id", "status", "since"]

    var webhooks: [ScriptFunction] {
        [
            list("webhooks.list", "webhooks.manage", "hub.webhooks.list() -> iterator of webhooks (never with a secret)") { _ in
                ("/webhooks", [])
            },
            fn("webhooks.get", "webhooks.manage", "hub.webhooks.get(id) -> webhook") { call, ctx in
                try ctx.get("/webhooks/\(segment(try call.id(1)))")
            },
            fn("webhooks.create", "webhooks.manage", writes: true,
               "hub.webhooks.create{url, events = {…} or {\"*\"}, description?} -> webhook (signing_secret withheld: see `hubscript listen --setup`)") { call, ctx in
                let fields = try call.fields(1)
                guard let url = try call.field(fields, "url", at: 1, max: 2048) else {
                    throw call.argumentError(1, "field 'url' (a string) is required")
                }
                guard case .array(let events)? = fields["events"], !events.isEmpty, events.allSatisfy({ $0.stringValue != nil }) else {
                    throw call.argumentError(1, "field 'events' (a list of event types, or {\"*\"}) is required")
                }
                return try withholdingSecret(ctx, call, optionsAt: 2, .post, "/webhooks", body: try call.body(fields, at: 1),
                                             summary: "create webhook to \(url)",
                                             predicted: ["url": .string(url), "status": "healthy"], creates: CreatedID(prefix: "whk"))
            },
            fn("webhooks.update", "webhooks.manage", writes: true,
               "hub.webhooks.update(id, {url?, events?, description?, status = \"healthy\"?}, opts) -> webhook") { call, _ in
                let id = try call.id(1)
                let fields = try call.fields(2)
                guard !fields.isEmpty else { throw call.argumentError(2, "at least one field to change expected") }
                var predicted = fields
                predicted["id"] = .string(id)
                return try write(call, optionsAt: 3, .patch, "/webhooks/\(segment(id))", body: try call.body(fields, at: 2),
                                 summary: "update webhook \(id): \(fields.keys.sorted().joined(separator: ", "))",
                                 predicted: .object(predicted), stillApplies: { _ in true })
            },
            fn("webhooks.delete", "webhooks.manage", writes: true, "hub.webhooks.delete(id, opts) -> true") { call, _ in
                let id = try call.id(1)
                return try write(call, optionsAt: 2, .delete, "/webhooks/\(segment(id))", summary: "delete webhook \(id)",
                                 predicted: .bool(true))
            },
            fn("webhooks.rotate_secret", "webhooks.manage", writes: true,
               "hub.webhooks.rotate_secret(id, opts) -> {id, previous_secret_expires_at} (the new secret is withheld)") { call, ctx in
                let id = try call.id(1)
                return try withholdingSecret(ctx, call, optionsAt: 2, .post, "/webhooks/\(segment(id))/rotate-secret", body: [:],
                                             summary: "rotate the signing secret of webhook \(id)", predicted: ["id": .string(id)])
            },
            fn("webhooks.test", "webhooks.manage", writes: true, "hub.webhooks.test(id, opts) -> {delivery_id} (sends a webhook.test event)") { call, _ in
                let id = try call.id(1)
                return try write(call, optionsAt: 2, .post, "/webhooks/\(segment(id))/test", body: [:],
                                 summary: "send a test event to webhook \(id)", predicted: [:], creates: CreatedID(prefix: "dlv", field: "delivery_id"))
            },
            list("webhooks.deliveries", "webhooks.manage",
                 "hub.webhooks.deliveries(id, {event_id, status, since}) -> iterator of deliveries") { call in
                ("/webhooks/\(segment(try call.id(1)))/deliveries", try call.query(2, allowed: Self.deliveryFilters))
            },
            fn("webhooks.redeliver", "webhooks.manage", writes: true,
               "hub.webhooks.redeliver(id, delivery_id, opts) -> true (the same event id, a new delivery)") { call, _ in
                let (id, delivery) = (try call.id(1), try call.id(2))
                return try write(call, optionsAt: 3, .post, "/webhooks/\(segment(id))/deliveries/\(segment(delivery))/redeliver",
                                 body: [:], summary: "redeliver \(delivery) of webhook \(id)", predicted: .bool(true))
            },
        ]
    }

    /// A write whose response holds `signing_secret`: the secret is dropped inside the
    /// send, before the coordinator journals the result.
    private func withholdingSecret(_ ctx: HubCall, _ call: BindingCall, optionsAt n: Int, _ method: HubMethod, _ path: String,
                                   body: HubJSON, summary: String, predicted: ScriptValue,
                                   creates: CreatedID? = nil) throws -> ScriptValue {
        let payload = CanonicalJSON(body)
        let intent = WriteIntent(method: method.rawValue, path: path, body: payload, explicitKey: try call.key(n),
                                 summary: summary, predicted: predicted, creates: creates)
        let client = ctx.client, feature = ctx.feature
        let result = try ctx.performWrite(intent) { key in
            do {
                let response = try client.send(HubRequest(method, path, payload: payload, idempotencyKey: key, feature: feature))
                return Self.withoutSecret(ScriptValue(response.json))
            } catch let error as HubError where RejectedWrite.isDefinite(error) {
                throw RejectedWrite(error: error)
            }
        }
        return result.value
    }

    static func withoutSecret(_ value: ScriptValue) -> ScriptValue {
        guard case .object(var fields) = value else { return value }
        if fields.removeValue(forKey: "signing_secret") != nil { fields["signing_secret_withheld"] = .bool(true) }
        return .object(fields)
    }
}
