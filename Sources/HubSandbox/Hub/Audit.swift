import SQLiteKit
import Foundation

/// The audit log: exactly one event per change the sandbox makes (a replayed idempotent
/// request makes no change and writes none). Events are newest first by timestamp.
extension HubEngine {
    /// Records one event in the current transaction. `actor` defaults to the caller.
    func audit(_ c: RequestContext, action: String, target: (type: String, id: String), targetUser: String?,
               app: String? = nil, org: String? = nil, before: JSON? = nil, after: JSON? = nil,
               actor: (type: String, id: String?)? = nil) throws {
        let a = actor ?? c.caller.map { ($0.actor.type, Optional($0.actor.id)) } ?? ("system", nil)
        let id = newId("evt_")
        try db.run("""
            INSERT INTO audit_events(id, action, actor_type, actor_id, target_type, target_id, target_user_id,
              application_id, organization_id, before, after, request_id, ts) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)
            """, [.text(id), .text(action), .text(a.type), .opt(a.id), .text(target.type), .text(target.id),
                  .opt(targetUser), .opt(app), .opt(org), .opt(before.map { String(decoding: $0.data, as: UTF8.self) }),
                  .opt(after.map { String(decoding: $0.data, as: UTF8.self) }), .text(c.requestId), .int(c.now)])
        try enqueueWebhookEvent(action: action, auditId: id, target: target, targetUser: targetUser, app: app, org: org,
                                after: after, now: c.now)
    }

    static let auditColumns = """
        id, action, actor_type, actor_id, target_type, target_id, target_user_id, application_id, organization_id,
        before, after, request_id, ts
        """

    static func auditJSON(_ s: Statement) -> JSON {
        func raw(_ i: Int32) -> JSON { s.textOrNil(i).flatMap { try? JSONParser.parse(Data($0.utf8)) } ?? .null }
        return .object([
            ("id", .string(s.text(0))), ("action", .string(s.text(1))),
            ("actor", .object([("type", .string(s.text(2))), ("id", .str(s.textOrNil(3)))])),
            ("target", .object([("type", .string(s.text(4))), ("id", .string(s.text(5)))])),
            ("target_user_id", .str(s.textOrNil(6))), ("application_id", .str(s.textOrNil(7))),
            ("organization_id", .str(s.textOrNil(8))), ("before", raw(9)), ("after", raw(10)),
            ("request_id", .str(s.textOrNil(11))), ("timestamp", .time(s.int(12))),
        ])
    }

    /// Writes the row as `auditJSON(s).write(into:)` would, byte for byte, reading the
    /// text columns straight from SQLite (`before`/`after` still go through the parser,
    /// so stored JSON is normalized exactly as before).
    static func writeAuditJSON(_ s: Statement, into out: inout [UInt8]) {
        func raw(_ i: Int32) {
            (s.textOrNil(i).flatMap { try? JSONParser.parse(Data($0.utf8)) } ?? .null).write(into: &out)
        }
        out.appendASCII(#"{"id":"#); s.writeText(0, into: &out)
        out.appendASCII(#","action":"#); s.writeText(1, into: &out)
        out.appendASCII(#","actor":{"type":"#); s.writeText(2, into: &out)
        out.appendASCII(#","id":"#); s.writeTextOrNull(3, into: &out)
        out.appendASCII(#"},"target":{"type":"#); s.writeText(4, into: &out)
        out.appendASCII(#","id":"#); s.writeText(5, into: &out)
        out.appendASCII(#"},"target_user_id":"#); s.writeTextOrNull(6, into: &out)
        out.appendASCII(#","application_id":"#); s.writeTextOrNull(7, into: &out)
        out.appendASCII(#","organization_id":"#); s.writeTextOrNull(8, into: &out)
        out.appendASCII(#","before":"#); raw(9)
        out.appendASCII(#","after":"#); raw(10)
        out.appendASCII(#","request_id":"#); s.writeTextOrNull(11, into: &out)
        out.appendASCII(#","timestamp":"#); Time.writeJSON(s.int(12), into: &out)
        out.append(UInt8(ascii: "}"))
    }

    func listAuditEvents(_ c: RequestContext) throws -> Reply {
        try c.require("audit.view")
        var q = ListQuery(from: "audit_events", columns: HubEngine.auditColumns, columnCount: 13, sort: "ts", seq: "seq")
        for (param, column) in [("target_user_id", "target_user_id"), ("target_type", "target_type"), ("target_id", "target_id"),
                                ("actor_id", "actor_id"), ("actor_type", "actor_type"), ("application_id", "application_id"),
                                ("organization_id", "organization_id")] {
            if let v = c.q(param) { q.add("\(column) = ?", .text(v)) }
        }
        let actions = c.qAll("action").flatMap { $0.split(separator: ",").map(String.init) }
        if !actions.isEmpty {
            q.conditions.append("action IN (" + actions.map { _ in "?" }.joined(separator: ",") + ")")
            q.args.append(contentsOf: actions.map(SQLValue.text))
        }
        if let since = try HubEngine.timeFilter(c, "since") { q.add("ts >= ?", .int(since)) }
        if let until = try HubEngine.timeFilter(c, "until") { q.add("ts < ?", .int(until)) }
        return try runList(c, q, scope: "audit-events", filters: [
            "target_user_id", "target_type", "target_id", "actor_id", "actor_type", "action", "application_id",
            "organization_id", "since", "until",
        ], write: HubEngine.writeAuditJSON)
    }

    func getAuditEvent(_ c: RequestContext) throws -> Reply {
        try c.require("audit.view")
        guard let e = try db.first("SELECT \(HubEngine.auditColumns) FROM audit_events WHERE id = ?", [.text(c.params[0])],
                                   HubEngine.auditJSON) else { throw HubErrorReply.notFound("Audit event \(c.params[0])") }
        return .json(200, e, etag: 1)
    }
}
