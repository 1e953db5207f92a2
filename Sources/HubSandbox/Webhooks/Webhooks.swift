import SQLiteKit
import Foundation

/// The Hub's webhook subscriptions (docs/webhooks.md, "The sandbox's webhooks").
/// Every audit event whose action is a webhook event type is written, in the same
/// transaction, as one `wev_` event and one pending delivery per subscribed webhook (a
/// transactional outbox); `WebhookDeliverer` posts them later, never inside a request.
extension HubEngine {
    static let webhookSchema = """
    CREATE TABLE IF NOT EXISTS webhooks(
      seq INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, url TEXT NOT NULL, events TEXT NOT NULL, description TEXT,
      status TEXT NOT NULL, api_version TEXT NOT NULL, secret TEXT NOT NULL, previous_secret TEXT,
      previous_expires_at INTEGER, consecutive_failures INTEGER NOT NULL DEFAULT 0, last_delivery_at INTEGER,
      created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, version INTEGER NOT NULL DEFAULT 1);
    CREATE TABLE IF NOT EXISTS webhook_events(
      seq INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, type TEXT NOT NULL, body TEXT NOT NULL, created_at INTEGER NOT NULL);
    CREATE TABLE IF NOT EXISTS webhook_deliveries(
      seq INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, webhook_id TEXT NOT NULL, event_id TEXT NOT NULL,
      event_type TEXT NOT NULL, attempt INTEGER NOT NULL DEFAULT 0, status TEXT NOT NULL, response_status INTEGER,
      duration_ms INTEGER, error TEXT, next_attempt_ms INTEGER, created_at INTEGER NOT NULL);
    CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries(status, next_attempt_ms);
    """
    static let webhookTables = ["webhooks", "webhook_events", "webhook_deliveries"]

    /// The event types a subscription may name (the Hub's; docs/webhooks.md lists them).
    static let webhookEventTypes: Set<String> = [
        "access.granted", "access.revoked", "entitlement.granted", "entitlement.disabled", "entitlement.revoked",
        "entitlement.expired", "entitlement.updated", "entitlement.member_scope_changed", "entitlement.deleted",
        "role.assigned", "role.removed", "user.suspended", "user.reactivated", "user.deleted",
        "organization.member_added", "organization.member_removed", "application.review_status_changed", "webhook.test",
    ]
    static let webhookAPIVersion = "2026-10-05"

    // MARK: Outbox

    /// Called by `audit` for every event: when `action` is a webhook event type, writes the
    /// `wev_` event and a pending delivery for each healthy subscription to it.
    func enqueueWebhookEvent(action: String, auditId: String, target: (type: String, id: String), targetUser: String?,
                             app: String?, org: String?, after: JSON?, now: Int) throws {
        guard HubEngine.webhookEventTypes.contains(action) else { return }
        var data: [(String, JSON)] = [("audit_event_id", .string(auditId))]
        switch action.split(separator: ".").first ?? "" {
        case "entitlement": data.append(("entitlement_id", .string(target.id)))
        case "role": data += [("user_id", .str(targetUser)), ("role_id", .string(target.id)), ("application_id", .str(app))]
        case "organization": data += [("organization_id", .str(org)), ("user_id", .str(targetUser))]
        default: data.append(("user_id", .str(targetUser)))
        }
        if let after { data.append(("after", after)) }
        try enqueueWebhookEvent(type: action, data: .object(data), app: app, now: now, only: nil)
    }

    /// Writes one event and its deliveries; `only` restricts them to one webhook (tests).
    /// Returns the delivery ids. The `dup` fault adds a second delivery of the same event.
    @discardableResult
    func enqueueWebhookEvent(type: String, data: JSON, app: String?, now: Int, only: String?) throws -> [String] {
        var targets: [(String, String)] = []
        if let only {
            targets.append((only, ""))
        } else {
            try db.query("SELECT id, events FROM webhooks WHERE status != 'disabled' ORDER BY seq") { s in
                let events = s.text(1).split(separator: ",").map(String.init)
                if events.contains("*") || events.contains(type) { targets.append((s.text(0), s.text(1))) }
            }
        }
        guard !targets.isEmpty else { return [] }
        let eventId = newId("wev_")
        let body = JSON.object([
            ("id", .string(eventId)), ("type", .string(type)), ("api_version", .string(HubEngine.webhookAPIVersion)),
            ("created_at", .time(now)), ("application_id", .str(app)), ("test_mode", .bool(true)), ("data", data),
        ]).data
        try db.run("INSERT INTO webhook_events(id, type, body, created_at) VALUES (?,?,?,?)",
                   [.text(eventId), .text(type), .text(String(decoding: body, as: UTF8.self)), .int(now)])
        var ids: [String] = []
        let due = WebhookDeliverer.nowMs()
        for (webhook, _) in targets {
            var copies = 1
            if options.faults.duplicateRate > 0, faultRNG.unit() < options.faults.duplicateRate { copies = 2 }
            for _ in 0..<copies {
                var at = due
                if options.faults.reorderRate > 0, faultRNG.unit() < options.faults.reorderRate { at += WebhookDeliverer.reorderDelayMs }
                ids.append(try insertDelivery(webhook: webhook, eventId: eventId, type: type, due: at, now: now))
            }
        }
        return ids
    }

    @discardableResult
    func insertDelivery(webhook: String, eventId: String, type: String, due: Int, now: Int) throws -> String {
        let id = newId("dlv_")
        try db.run("""
            INSERT INTO webhook_deliveries(id, webhook_id, event_id, event_type, status, next_attempt_ms, created_at)
            VALUES (?,?,?,?,'pending',?,?)
            """, [.text(id), .text(webhook), .text(eventId), .text(type), .int(due), .int(now)])
        return id
    }

    // MARK: Handlers

    private static let webhookColumns = """
        id, url, events, description, status, api_version, consecutive_failures, last_delivery_at, created_at, updated_at, version
        """

    private static func webhookJSON(_ s: Statement) -> JSON {
        .object([
            ("id", .string(s.text(0))), ("scope", .string("platform")), ("url", .string(s.text(1))),
            ("events", .array(s.text(2).split(separator: ",").map { .string(String($0)) })),
            ("description", .str(s.textOrNil(3))), ("status", .string(s.text(4))), ("api_version", .string(s.text(5))),
            ("test_mode", .bool(true)), ("consecutive_failures", .int(s.int(6))), ("last_delivery_at", .time(s.intOrNil(7))),
            ("created_at", .time(s.int(8))), ("updated_at", .time(s.int(9))),
        ])
    }

    private func loadWebhook(_ id: String) throws -> (json: JSON, version: Int) {
        guard let w = try db.first("SELECT \(HubEngine.webhookColumns) FROM webhooks WHERE id = ?", [.text(id)], {
            (HubEngine.webhookJSON($0), $0.int(10))
        }) else {
            throw HubErrorReply(status: 404, code: "webhook_not_found", message: "Webhook \(id) was not found.")
        }
        return w
    }

    /// The webhook the path names, for a caller with `webhooks.manage`; with `ifMatch`,
    /// `If-Match` must match its version.
    private func namedWebhook(_ c: RequestContext, ifMatch: Bool = false) throws -> (id: String, json: JSON, version: Int) {
        try c.require("webhooks.manage")
        let id = c.params[0]
        let w = try loadWebhook(id)
        if ifMatch { try c.checkIfMatch(w.version) }
        return (id, w.json, w.version)
    }

    /// A loopback `http://` URL (the sandbox delivers nowhere else).
    private static func checkURL(_ value: JSON?) throws -> String {
        guard let url = value?.stringValue, let parts = WebhookDeliverer.Target(url: url) else {
            throw HubErrorReply(status: 422, code: "invalid_webhook_url",
                                message: "The sandbox delivers only to http://127.0.0.1:PORT/… or http://localhost:PORT/… URLs.")
        }
        _ = parts
        return url
    }

    private static func checkEvents(_ value: JSON?) throws -> String {
        guard case .array(let items)? = value, !items.isEmpty else { throw HubErrorReply.validation([("events", "required")]) }
        var names: [String] = []
        for item in items {
            guard let name = item.stringValue else { throw HubErrorReply.validation([("events", "invalid")]) }
            guard name == "*" || webhookEventTypes.contains(name) else {
                throw HubErrorReply(status: 422, code: "unknown_event_type", message: "Unknown webhook event type '\(name)'.")
            }
            names.append(name)
        }
        return names.joined(separator: ",")
    }

    private static func checkDescription(_ value: JSON?) throws -> String? {
        guard let value, !value.isNull else { return nil }
        guard let d = value.stringValue, d.count <= 255 else { throw HubErrorReply.validation([("description", "invalid")]) }
        return d
    }

    private func newSecret() -> String { "whsec_" + HubEngine.randomToken(32) }

    func listWebhooks(_ c: RequestContext) throws -> Reply {
        try c.require("webhooks.manage")
        var items: [JSON] = []
        try db.query("SELECT \(HubEngine.webhookColumns) FROM webhooks ORDER BY seq") { items.append(HubEngine.webhookJSON($0)) }
        return HubEngine.wholeList(items)
    }

    func createWebhook(_ c: RequestContext) throws -> Reply {
        try c.require("webhooks.manage")
        let b = try c.body()
        let url = try HubEngine.checkURL(b["url"])
        let events = try HubEngine.checkEvents(b["events"])
        let description = try HubEngine.checkDescription(b["description"])
        let id = newId("whk_"), secret = newSecret()
        try db.run("""
            INSERT INTO webhooks(id, url, events, description, status, api_version, secret, created_at, updated_at)
            VALUES (?,?,?,?,'healthy',?,?,?,?)
            """, [.text(id), .text(url), .text(events), .opt(description), .text(HubEngine.webhookAPIVersion), .text(secret),
                  .int(c.now), .int(c.now)])
        try audit(c, action: "webhook.created", target: ("webhook", id), targetUser: nil,
                  after: .object([("url", .string(url)), ("events", .string(events))]))
        guard case .object(var fields) = try loadWebhook(id).json else { throw HubErrorReply.internalError() }
        fields.append(("signing_secret", .string(secret)))
        return .json(201, .object(fields))
    }

    func getWebhook(_ c: RequestContext) throws -> Reply {
        .json(200, try namedWebhook(c).json)
    }

    func patchWebhook(_ c: RequestContext) throws -> Reply {
        let (id, before, _) = try namedWebhook(c, ifMatch: true)
        let b = try c.body()
        for key in b.objectKeys where !["url", "events", "description", "status", "api_version"].contains(key) {
            throw HubErrorReply.validation([(key, "unknown")])
        }
        if b["url"] != nil { try db.run("UPDATE webhooks SET url = ? WHERE id = ?", [.text(try HubEngine.checkURL(b["url"])), .text(id)]) }
        if b["events"] != nil { try db.run("UPDATE webhooks SET events = ? WHERE id = ?", [.text(try HubEngine.checkEvents(b["events"])), .text(id)]) }
        if b["description"] != nil {
            try db.run("UPDATE webhooks SET description = ? WHERE id = ?", [.opt(try HubEngine.checkDescription(b["description"])), .text(id)])
        }
        if let status = b["status"] {
            guard status.stringValue == "healthy" else { throw HubErrorReply.validation([("status", "invalid")]) }
            try db.run("UPDATE webhooks SET status = 'healthy', consecutive_failures = 0 WHERE id = ?", [.text(id)])
        }
        try db.run("UPDATE webhooks SET updated_at = ?, version = version + 1 WHERE id = ?", [.int(c.now), .text(id)])
        let after = try loadWebhook(id).json
        try audit(c, action: "webhook.updated", target: ("webhook", id), targetUser: nil, before: before, after: after)
        return .json(200, after)
    }

    func deleteWebhook(_ c: RequestContext) throws -> Reply {
        let (id, before, _) = try namedWebhook(c, ifMatch: true)
        try db.run("DELETE FROM webhooks WHERE id = ?", [.text(id)])
        try db.run("UPDATE webhook_deliveries SET status = 'failed', error = 'webhook deleted', next_attempt_ms = NULL WHERE webhook_id = ? AND status = 'pending'", [.text(id)])
        try audit(c, action: "webhook.deleted", target: ("webhook", id), targetUser: nil, before: before)
        return .noContent
    }

    func rotateWebhookSecret(_ c: RequestContext) throws -> Reply {
        let id = try namedWebhook(c).id
        let secret = newSecret(), expires = c.now + 24 * 3600
        try db.run("""
            UPDATE webhooks SET previous_secret = secret, previous_expires_at = ?, secret = ?, updated_at = ?, version = version + 1
            WHERE id = ?
            """, [.int(expires), .text(secret), .int(c.now), .text(id)])
        try audit(c, action: "webhook.secret_rotated", target: ("webhook", id), targetUser: nil)
        return .json(200, .object([("id", .string(id)), ("signing_secret", .string(secret)), ("previous_secret_expires_at", .time(expires))]))
    }

    func testWebhook(_ c: RequestContext) throws -> Reply {
        let id = try namedWebhook(c).id
        let ids = try enqueueWebhookEvent(type: "webhook.test", data: .object([("message", .string("Test event from Substratal"))]),
                                          app: nil, now: c.now, only: id)
        return .json(202, .object([("delivery_id", .string(ids[0]))]))
    }

    static let deliveryColumns = "id, event_id, event_type, attempt, status, response_status, duration_ms, error, next_attempt_ms, created_at"

    static func deliveryJSON(_ s: Statement) -> JSON {
        .object([
            ("id", .string(s.text(0))), ("event_id", .string(s.text(1))), ("event_type", .string(s.text(2))),
            ("attempt", .int(s.int(3))), ("status", .string(s.text(4))), ("response_status", s.intOrNil(5).map(JSON.int) ?? .null),
            ("duration_ms", s.intOrNil(6).map(JSON.int) ?? .null), ("error", .str(s.textOrNil(7))),
            ("next_retry_at", s.intOrNil(8).map { .time($0 / 1000) } ?? .null), ("created_at", .time(s.int(9))),
        ])
    }

    func listWebhookDeliveries(_ c: RequestContext) throws -> Reply {
        let id = try namedWebhook(c).id
        var sql = "SELECT \(HubEngine.deliveryColumns) FROM webhook_deliveries WHERE webhook_id = ?"
        var args: [SQLValue] = [.text(id)]
        if let e = c.q("event_id") { sql += " AND event_id = ?"; args.append(.text(e)) }
        if let s = c.q("status") {
            guard ["pending", "succeeded", "failed"].contains(s) else { throw HubErrorReply.invalidRequest("status is pending, succeeded or failed.") }
            sql += " AND status = ?"; args.append(.text(s))
        }
        sql += " ORDER BY seq DESC LIMIT ?"
        args.append(.int(try HubEngine.limit(c)))
        var items: [JSON] = []
        try db.query(sql, args) { items.append(HubEngine.deliveryJSON($0)) }
        return HubEngine.wholeList(items)
    }

    /// A new delivery of the same `wev_` event, outside the retry schedule.
    func redeliverWebhook(_ c: RequestContext) throws -> Reply {
        let id = try namedWebhook(c).id
        guard let d = try db.first("SELECT event_id, event_type FROM webhook_deliveries WHERE id = ? AND webhook_id = ?",
                                   [.text(c.params[1]), .text(id)], { ($0.text(0), $0.text(1)) }) else {
            throw HubErrorReply(status: 404, code: "delivery_not_found", message: "Delivery \(c.params[1]) was not found.")
        }
        try insertDelivery(webhook: id, eventId: d.0, type: d.1, due: WebhookDeliverer.nowMs(), now: c.now)
        return Reply(status: 202, body: nil)
    }
}
