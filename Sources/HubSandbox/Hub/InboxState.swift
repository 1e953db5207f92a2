import SQLiteKit
import Foundation

/// The caller's inbox items' state: `PATCH /users/me/notifications/{id}` `{state:
/// read|unread|archived}` → 200 with the item (a user token only: an API key has no
/// inbox, `400 user_token_required`). Another user's item, or an unknown id, is `404
/// not_found`; any other field is `422 read_only_field`. Setting the state it already
/// has answers 200 and changes nothing. An item without a row in `notification_states`
/// is `unread`. The inbox is the user's own: marking an item writes no audit event (no
/// audit action of the Hub covers it: docs/hub-api.md, "The rest of the admin API").
extension HubEngine {
    static let inboxStates = ["unread", "read", "archived"]
    static let inboxColumns = """
        n.id, n.application_id, n.title, n.body, n.category, n.action_url, n.created_at, COALESCE(st.state, 'unread'), n.sender_type
        """

    static func inboxJSON(_ s: Statement) -> JSON {
        .object([("id", .string(s.text(0))), ("application_id", .string(s.text(1))), ("title", .string(s.text(2))),
                 ("body", .string(s.text(3))), ("category", .string(s.text(4))), ("action_url", .str(s.textOrNil(5))),
                 ("created_at", .time(s.int(6))), ("state", .string(s.text(7))),
                 ("source", .string(s.text(8) == "system" ? "platform" : "application"))])
    }

    func markNotification(_ c: RequestContext) throws -> Reply {
        let me = try c.userParam("me"), id = c.params[0]
        let b = try c.body()
        let readOnly = b.objectKeys.filter { $0 != "state" }
        if !readOnly.isEmpty { throw HubErrorReply.readOnly(readOnly) }
        guard let state = b["state"]?.stringValue, HubEngine.inboxStates.contains(state) else {
            throw HubErrorReply.validation([("state", b["state"] == nil ? "required" : "invalid")])
        }
        let load = { [db] in
            try db.first("""
                SELECT \(HubEngine.inboxColumns), COALESCE(st.version, 1) FROM notifications n
                LEFT JOIN notification_states st ON st.id = n.id WHERE n.id = ? AND n.user_id = ?
                """, [.text(id), .text(me)]) { (json: HubEngine.inboxJSON($0), state: $0.text(7), version: $0.int(9)) }
        }
        guard let item = try load() else { throw HubErrorReply.notFound("Notification \(id)") }
        try c.checkIfMatch(item.version)
        guard item.state != state else { return .json(200, item.json, etag: item.version) }
        try db.run("""
            INSERT INTO notification_states(id, state, changed_at, version) VALUES (?, ?, ?, 2)
            ON CONFLICT(id) DO UPDATE SET state = excluded.state, changed_at = excluded.changed_at, version = version + 1
            """, [.text(id), .text(state), .int(c.now)])
        guard let n = try load() else { throw HubErrorReply.notFound("Notification \(id)") }
        return .json(200, n.json, etag: n.version)
    }
}
