import Foundation
import JSONKit
import SQLiteKit

/// A newest-first keyset query: `sort DESC, seq DESC`, resumed after the cursor's
/// (sort, seq) pair. `columns` come first in each row; the runner appends sort and seq.
struct ListQuery {
    var from: String
    var columns: String
    var columnCount: Int32
    var sort: String
    var seq: String
    var conditions: [String] = []
    var args: [SQLValue] = []

    mutating func add(_ condition: String, _ values: SQLValue...) {
        conditions.append(condition)
        args.append(contentsOf: values)
    }
}

/// Cursor pagination (docs/hub-api.md "Conventions", pagination): `limit` 1…100 (default 25, larger is
/// clamped), opaque cursors bound to the endpoint and the filters they were issued with
/// and expiring after 24 h (`400 invalid_cursor` otherwise).
extension HubEngine {
    static let cursorTTL = 86_400

    /// Runs `q` for the page the request asks for and renders `{data, page}`.
    /// `filters` names the query parameters the cursor is bound to.
    func runList(_ c: RequestContext, _ q: ListQuery, scope: String, filters: [String],
                 map: (Statement) throws -> JSON) throws -> Reply {
        try runList(c, q, scope: scope, filters: filters, write: { s, out in try map(s).write(into: &out) })
    }

    /// `runList` with a row writer that renders each row's JSON object straight into the
    /// response bytes; it must write exactly what the `map` form's JSON would.
    func runList(_ c: RequestContext, _ q: ListQuery, scope: String, filters: [String],
                 write: (Statement, inout [UInt8]) throws -> Void) throws -> Reply {
        var q = q
        let limit = try HubEngine.limit(c)
        let binding = HubEngine.bindingHash(c, scope: scope, filters: filters)
        if let raw = c.q("cursor"), !raw.isEmpty {
            guard let cur = HubEngine.decodeCursor(raw), cur.binding == binding else {
                throw HubErrorReply(status: 400, code: "invalid_cursor",
                               message: "The cursor does not belong to this list and these filters; start again without it.")
            }
            guard c.now - cur.issued < HubEngine.cursorTTL, cur.issued <= c.now + 60 else {
                throw HubErrorReply(status: 400, code: "invalid_cursor", message: "The cursor expired (24 h); start again without it.")
            }
            // A row value, so SQLite walks the (sort, seq) index from the cursor on
            // instead of re-sorting the whole filtered range for every page.
            q.add("(\(q.sort), \(q.seq)) < (?, ?)", .int(cur.sort), .int(cur.seq))
        }
        let whereClause = q.conditions.isEmpty ? "" : " WHERE " + q.conditions.joined(separator: " AND ")
        let sql = "SELECT \(q.columns), \(q.sort), \(q.seq) FROM \(q.from)\(whereClause) ORDER BY \(q.sort) DESC, \(q.seq) DESC LIMIT ?"
        var out: [UInt8] = []
        out.reserveCapacity(64 + limit * 320)
        out.appendASCII(#"{"data":["#)
        var count = 0
        var last: (Int, Int)?
        var hasMore = false
        try db.query(sql, q.args + [.int(limit + 1)]) { s in
            if count == limit { hasMore = true; return }
            if count > 0 { out.append(UInt8(ascii: ",")) }
            try write(s, &out)
            count += 1
            last = (s.int(q.columnCount), s.int(q.columnCount + 1))
        }
        out.appendASCII(#"],"page":{"next_cursor":"#)
        if hasMore, let last {
            JSONWriter.writeString(HubEngine.encodeCursor(binding: binding, issued: c.now, sort: last.0, seq: last.1), into: &out)
        } else {
            out.appendASCII("null")
        }
        out.appendASCII(hasMore ? #","has_more":true}}"# : #","has_more":false}}"#)
        return .json(200, .raw(out))
    }

    /// A single page holding everything (small catalogs), in the list shape.
    static func wholeList(_ items: [JSON]) -> Reply {
        .json(200, .object([("data", .array(items)), ("page", .object([("next_cursor", .null), ("has_more", .bool(false))]))]))
    }

    static func limit(_ c: RequestContext) throws -> Int {
        guard let raw = c.q("limit") else { return 25 }
        guard let n = Int(raw), n >= 1 else { throw HubErrorReply.invalidRequest("limit must be a whole number from 1 to 100.") }
        return min(n, 100)
    }

    static func bindingHash(_ c: RequestContext, scope: String, filters: [String]) -> String {
        var text = scope
        for name in filters.sorted() {
            let values = c.qAll(name)
            if !values.isEmpty { text += "\u{1}" + name + "=" + values.joined(separator: "\u{2}") }
        }
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in text.utf8 { h ^= UInt64(b); h = h &* 0x100_0000_01b3 }
        return String(h, radix: 36)
    }

    static func encodeCursor(binding: String, issued: Int, sort: Int, seq: Int) -> String {
        let raw = "c1.\(binding).\(issued).\(sort).\(seq)"
        return String(Data(raw.utf8).base64EncodedString().unicodeScalars.compactMap { c -> Character? in
            c == "+" ? "-" : c == "/" ? "_" : c == "=" ? nil : Character(c)
        })
    }

    static func decodeCursor(_ s: String) -> (binding: String, issued: Int, sort: Int, seq: Int)? {
        var b64 = String(s.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
        while b64.count % 4 != 0 { b64 += "=" }
        guard let data = Data(base64Encoded: b64) else { return nil }
        let parts = String(decoding: data, as: UTF8.self).split(separator: ".")
        guard parts.count == 5, parts[0] == "c1", let issued = Int(parts[2]), let sort = Int(parts[3]), let seq = Int(parts[4])
        else { return nil }
        return (String(parts[1]), issued, sort, seq)
    }

    /// Parses a timestamp filter (`400 invalid_request` when malformed).
    static func timeFilter(_ c: RequestContext, _ name: String) throws -> Int? {
        guard let raw = c.q(name) else { return nil }
        guard let t = Time.parse(raw) else { throw HubErrorReply.invalidRequest("\(name) must be an RFC 3339 timestamp.") }
        return t
    }
}
