import SQLiteKit
import Foundation

/// Application notifications *(sandbox shape)* and the caller's inbox.
///
/// `POST /applications/{appId}/notifications` `{user_id, title (1–100), body (1–1000),
/// category, action_url?}` → 201 `{id}`, one `notification.sent` event; at most 60 per
/// recipient per application per hour (`429 rate_limited` when limits are standard).
extension HubEngine {
    func sendNotification(_ c: RequestContext) throws -> Reply {
        try c.require("notifications.send")
        let app = c.params[0]
        guard try db.first("SELECT 1 FROM applications WHERE id = ?", [.text(app)], { _ in true }) != nil else {
            throw HubErrorReply.notFound("Application \(app)")
        }
        let b = try c.body()
        var bad: [(String, String)] = []
        let user = b["user_id"]?.stringValue
        if user == nil || user!.isEmpty { bad.append(("user_id", "required")) }
        else if try db.first("SELECT 1 FROM users WHERE id = ?", [.text(user!)], { _ in true }) == nil { bad.append(("user_id", "unknown")) }
        let title = b["title"]?.stringValue ?? "", text = b["body"]?.stringValue ?? ""
        if !(1...100).contains(title.count) { bad.append(("title", title.isEmpty ? "required" : "too_long")) }
        if !(1...1000).contains(text.count) { bad.append(("body", text.isEmpty ? "required" : "too_long")) }
        let category = b["category"]?.stringValue ?? ""
        if category.isEmpty { bad.append(("category", "required")) }
        if let u = b["action_url"], !u.isNull, u.stringValue == nil { bad.append(("action_url", "invalid")) }
        if !bad.isEmpty { throw HubErrorReply.validation(bad) }
        let o = limiter.take("notify:\(app):\(user!)", capacity: 60, window: 3600, now: options.clock.now().timeIntervalSince1970)
        if !o.allowed { throw HubErrorReply.rateLimited(retryAfter: o.retryAfter) }
        let id = newId("ntf_")
        let actor = c.who.actor
        try db.run("""
            INSERT INTO notifications(id, application_id, user_id, title, body, category, action_url, sender_type, sender_id, created_at)
            VALUES (?,?,?,?,?,?,?,?,?,?)
            """, [.text(id), .text(app), .text(user!), .text(title), .text(text), .text(category), .opt(b["action_url"]?.stringValue),
                  .text(actor.type), .text(actor.id), .int(c.now)])
        try audit(c, action: "notification.sent", target: ("notification", id), targetUser: user, app: app,
                  after: .object([("category", .string(category)), ("title", .string(title))]))
        return .json(201, .object([("id", .string(id))]), etag: 1)
    }

    /// `GET /users/me/notifications`: filters `category` (prefix) and `since`.
    func inbox(_ c: RequestContext) throws -> Reply {
        let me = try c.userParam("me")
        var q = ListQuery(from: "notifications", columns: "id, application_id, title, body, category, action_url, created_at",
                          columnCount: 7, sort: "created_at", seq: "seq")
        q.add("user_id = ?", .text(me))
        if let cat = c.q("category") { q.add("substr(category, 1, ?) = ?", .int(cat.unicodeScalars.count), .text(cat)) }
        if let since = try HubEngine.timeFilter(c, "since") { q.add("created_at >= ?", .int(since)) }
        return try runList(c, q, scope: "users/me/notifications", filters: ["category", "since"]) { s in
            .object([("id", .string(s.text(0))), ("application_id", .string(s.text(1))), ("title", .string(s.text(2))),
                     ("body", .string(s.text(3))), ("category", .string(s.text(4))), ("action_url", .str(s.textOrNil(5))),
                     ("created_at", .time(s.int(6)))])
        }
    }
}
