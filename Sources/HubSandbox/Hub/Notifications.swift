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

    /// `GET /users/me/notifications`: filters `category` (prefix), `since` and `state`
    /// (`unread`, `read`, `archived`); archived items are left out unless `state` or
    /// `include_inactive=true` asks for them. Items carry `state` and `source`.
    func inbox(_ c: RequestContext) throws -> Reply {
        let me = try c.userParam("me")
        var q = ListQuery(from: "notifications n LEFT JOIN notification_states st ON st.id = n.id", columns: HubEngine.inboxColumns,
                          columnCount: 9, sort: "n.created_at", seq: "n.seq")
        q.add("n.user_id = ?", .text(me))
        if let cat = c.q("category") { q.add("substr(n.category, 1, ?) = ?", .int(cat.unicodeScalars.count), .text(cat)) }
        if let since = try HubEngine.timeFilter(c, "since") { q.add("n.created_at >= ?", .int(since)) }
        if let state = c.q("state") { q.add("COALESCE(st.state, 'unread') = ?", .text(state)) } else if c.q("include_inactive") != "true" {
            q.add("COALESCE(st.state, 'unread') != 'archived'")
        }
        return try runList(c, q, scope: "users/me/notifications", filters: ["category", "since", "state", "include_inactive"],
                           map: HubEngine.inboxJSON)
    }
}
