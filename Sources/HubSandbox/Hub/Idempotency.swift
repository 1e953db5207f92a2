import SQLiteKit
import Foundation
import HTTPKit

/// Idempotency keys, scoped per caller (the user, or the API key) and kept 24 h.
///
/// A key is first reserved (`state = in_flight`), then its response is stored in the same
/// transaction as the change. 5xx and 429 responses release the key so a retry runs
/// again; every other response is replayed. A reservation older than 60 s is treated as
/// abandoned.
extension HubEngine {
    static let idempotencyTTL = 86_400
    static let inFlightTimeout = 60

    /// FNV-1a over method, path+query and body: same key with another request → reused.
    static func fingerprint(_ r: HTTPRequestMessage) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix<S: Sequence>(_ bytes: S) where S.Element == UInt8 {
            for b in bytes { h ^= UInt64(b); h = h &* 0x100_0000_01b3 }
        }
        mix(r.method.utf8); mix([0]); mix(r.target.utf8); mix([0]); mix(r.body)
        return String(h, radix: 16)
    }

    /// The stored reply to replay, or nil when the key is new (or expired/abandoned).
    /// Throws `409 idempotency_key_reused` / `409 idempotency_key_in_flight`.
    func idempotencyLookup(caller: String, key: String, fingerprint: String, now: Int) throws -> Reply? {
        let row = try db.first("SELECT fingerprint, state, status, headers, body, created_at FROM idempotency WHERE caller = ? AND key = ?",
                               [.text(caller), .text(key)]) { s in
            (fp: s.text(0), state: s.text(1), status: s.intOrNil(2), headers: s.textOrNil(3), body: s.textOrNil(4), created: s.int(5))
        }
        guard let row, now - row.created < HubEngine.idempotencyTTL else { return nil }
        if row.state == "in_flight" {
            if now - row.created >= HubEngine.inFlightTimeout { return nil }
            throw HubErrorReply(status: 409, code: "idempotency_key_in_flight",
                           message: "A request with this Idempotency-Key is still running; retry after 1 s.",
                           headers: [("Retry-After", "1")])
        }
        guard row.fp == fingerprint else {
            throw HubErrorReply(status: 409, code: "idempotency_key_reused",
                           message: "This Idempotency-Key was used with a different request; use a new key for a new request.")
        }
        var headers: [(String, String)] = []
        if let h = row.headers, let parsed = try? JSONParser.parse(Data(h.utf8)), case .array(let items) = parsed {
            for item in items {
                if case .array(let pair) = item, pair.count == 2, let n = pair[0].stringValue, let v = pair[1].stringValue {
                    headers.append((n, v))
                }
            }
        }
        headers.append(("Idempotent-Replayed", "true"))
        let body = row.body.flatMap { try? JSONParser.parse(Data($0.utf8)) }
        return Reply(status: row.status ?? 200, body: body, headers: headers)
    }

    func idempotencyReserve(caller: String, key: String, fingerprint: String, now: Int) throws {
        try db.run("""
            INSERT OR REPLACE INTO idempotency(caller, key, fingerprint, state, status, headers, body, created_at)
            VALUES (?, ?, ?, 'in_flight', NULL, NULL, NULL, ?)
            """, [.text(caller), .text(key), .text(fingerprint), .int(now)])
    }

    func idempotencyStore(caller: String, key: String, reply: Reply, now: Int) throws {
        let headers = JSON.array(reply.headers.map { .array([.string($0.0), .string($0.1)]) })
        let body = reply.body.map { String(decoding: $0.data, as: UTF8.self) }
        try db.run("UPDATE idempotency SET state = 'done', status = ?, headers = ?, body = ? WHERE caller = ? AND key = ?",
                   [.int(reply.status), .text(String(decoding: headers.data, as: UTF8.self)), .opt(body), .text(caller), .text(key)])
    }

    func idempotencyRelease(caller: String, key: String) throws {
        try db.run("DELETE FROM idempotency WHERE caller = ? AND key = ? AND state = 'in_flight'", [.text(caller), .text(key)])
    }
}
