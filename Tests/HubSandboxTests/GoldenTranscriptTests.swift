import Foundation
import HTTPKit
import XCTest
@testable import HubSandbox

/// Pins the exact bytes the sandbox answers (status, every header in order, body) for a
/// fixed script of requests on a manual clock: audit pages and filters, grants with
/// replays and conflicts, stored before/after JSON holding escapes and non-ASCII text,
/// header-name case, percent- and plus-encoded targets, and errors. Random ids
/// (`ent_`, `evt_` with 20 letters) are masked.
///
/// The pinned transcript is `Tests/Golden/sandbox-transcript.txt`, kept in the
/// repository so a reviewer can read what is pinned (it was recorded before the request
/// path was optimized; its FNV-1a digest then was `a50ce01a6efe3601-257505`). To
/// re-record it after an intended change, run this test with
/// `HUBSCRIPT_RECORD_GOLDEN=1` and review the diff of that file.
final class GoldenTranscriptTests: XCTestCase {
    static let pinned = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Golden/sandbox-transcript.txt")

    func testTranscriptIsByteIdentical() throws {
        let transcript = try GoldenTranscriptTests.transcript()
        if ProcessInfo.processInfo.environment["HUBSCRIPT_RECORD_GOLDEN"] == "1" {
            try FileManager.default.createDirectory(at: Self.pinned.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(transcript.utf8).write(to: Self.pinned)
        }
        let expected = try String(contentsOf: Self.pinned, encoding: .utf8)
        guard transcript != expected else { return }
        let actual = FileManager.default.temporaryDirectory.appendingPathComponent("hubsandbox-golden-transcript.txt")
        try? Data(transcript.utf8).write(to: actual)
        let got = transcript.split(separator: "\n", omittingEmptySubsequences: false)
        let want = expected.split(separator: "\n", omittingEmptySubsequences: false)
        let line = zip(got, want).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(got.count, want.count)
        XCTFail("""
            the transcript differs from \(Self.pinned.path) from line \(line + 1):
              pinned: \(line < want.count ? String(want[line]) : "(end of file)")
              now:    \(line < got.count ? String(got[line]) : "(end of file)")
            whole transcript written to \(actual.path) (diff it against the pinned file)
            """)
    }

    /// Replaces ids minted at request time (20 random letters) with a placeholder.
    static func mask(_ s: String) -> String {
        let re = try! NSRegularExpression(pattern: "(ent|evt)_[a-z2-9]{20}(?![a-z0-9])")
        return re.stringByReplacingMatches(in: s, range: NSRange(s.startIndex..., in: s), withTemplate: "$1_<random>")
    }

    static func transcript() throws -> String {
        let clock = ManualClock()
        let hub = try makeHub(clock: clock, users: 80, auditEvents: 450, seed: 7)
        var out = ""
        var n = 0
        func send(_ method: String, _ target: String, headers: [(String, String)]? = nil, body: String? = nil) -> Resp {
            n += 1
            var h = HTTPHeaders()
            for (k, v) in headers ?? [("Substratal-Version", "1"), ("Authorization", "Bearer \(jobsKey)")] { h.add(k, v) }
            h.add("X-Request-Id", "req-golden-\(n)")
            let r = hub.handle(HTTPRequestMessage(method: method, target: target, headers: h, body: Data((body ?? "").utf8)))
            out += "> \(method) \(target)\n< \(r.status)\(r.dropped ? " dropped" : "")\n"
            for (k, v) in r.headers { out += "\(k): \(v)\n" }
            out += String(decoding: r.body, as: UTF8.self) + "\n\n"
            return Resp(status: r.status, headers: r.headers, body: r.body, dropped: r.dropped)
        }
        func pages(_ base: String) {
            var cursor: String?
            repeat {
                let r = send("GET", base + (cursor.map { "&cursor=" + $0 } ?? ""))
                cursor = r.json["page"]?["next_cursor"]?.string
            } while cursor != nil
        }
        pages("/audit-events?limit=100")
        pages("/audit-events?limit=37&target_user_id=usr_ada")
        pages("/audit-events?limit=50&action=entitlement.granted,role.assigned&since=2025-12-01")
        pages("/audit-events?limit=100&actor_type=api_key&until=2026-01-01T00:00:00%2B01:00")

        let users = (send("GET", "/users?status=active&limit=12").json["data"]?.items ?? []).compactMap { $0["id"]?.string }
        for (i, u) in users.enumerated() {
            let key: [(String, String)] = [("Substratal-Version", "1"), ("Authorization", "Bearer \(jobsKey)"), ("Idempotency-Key", "golden-\(i)")]
            _ = send("POST", "/users/\(u)/entitlements", headers: key, body: #"{"application_id":"app_hub","source":"admin_grant"}"#)
            if i % 4 == 0 { _ = send("POST", "/users/\(u)/entitlements", headers: key, body: #"{"application_id":"app_hub","source":"admin_grant"}"#) }
            if i % 4 == 1 { _ = send("POST", "/users/\(u)/entitlements", headers: key, body: #"{"application_id":"app_wiki","source":"trial"}"#) }
            clock.advance(by: 1)
        }
        let lower: [(String, String)] = [("substratal-version", "1"), ("AUTHORIZATION", "bearer   \(jobsKey) "), ("idempotency-KEY", "golden-lower")]
        _ = send("POST", "/users/usr_ada/entitlements", headers: lower, body: #"{"application_id":"app_hub","source":"trial","ends_at":"2026-03-01T00:00:00Z"}"#)
        _ = send("POST", "/users/usr_ada/entitlements", headers: lower, body: #"{"application_id":"app_hub","source":"trial"}"#)
        _ = send("POST", "/users/usr_ada/entitlements", headers: [("Substratal-Version", "1"), ("Authorization", "Bearer \(jobsKey)"), ("Idempotency-Key", "g2")],
                 body: #"{"application_id":"app_hub","source":"trial"}"#)
        _ = send("POST", "/users/usr_ada/entitlements", body: #"{"application_id":"app_hub","source":"admin_grant"}"#)
        _ = send("POST", "/users/usr_ada/entitlements", headers: [("Substratal-Version", "1"), ("Authorization", "Bearer \(jobsKey)"), ("Idempotency-Key", "g3")],
                 body: #"{"application_id":"nope","source":"gift","starts_at":"x"}"#)
        let reason = #"quote \" back\\slash\nnew\ttab \u0001 é 日本 😀 \u007f"#
        _ = send("PATCH", "/entitlements/ent_ada_wiki", body: #"{"status":"disabled","disabled_reason":"\#(reason)"}"#)
        _ = send("PATCH", "/entitlements/ent_ada_wiki", headers: [("Substratal-Version", "1"), ("Authorization", "Bearer \(jobsKey)"), ("If-Match", #"W/"1", W/"2""#)],
                 body: #"{"status":"active"}"#)
        let first = send("GET", "/audit-events?limit=5")
        if let id = first.json["data"]?[1]?["id"]?.string { _ = send("GET", "/audit-events/\(id)") }
        _ = send("GET", "/audit-events/evt_ada_crm")
        pages("/audit-events?limit=100&target_user_id=usr_ada")
        pages("/users/usr_ada/entitlements?include_inactive=true&limit=3")
        pages("/entitlements?limit=100&application_id=app_hub")
        _ = send("GET", "/users?q=ada%40example.com")
        _ = send("GET", "/users?q=ada+lovelace&limit=2")
        _ = send("GET", "/users/usr%5Fada")
        _ = send("GET", "/users/usr_ada/roles")
        _ = send("GET", "/audit-events?limit=0")
        _ = send("GET", "/audit-events?cursor=bogus")
        _ = send("GET", "/audit-events", headers: [("Authorization", "Bearer \(jobsKey)")])
        _ = send("GET", "/audit-events", headers: [("Substratal-Version", "1")])
        _ = send("GET", "/audit-events", headers: [("Substratal-Version", "1"), ("Authorization", "Bearer satk_nope")])
        _ = send("DELETE", "/audit-events")
        _ = send("GET", "/nowhere")
        _ = send("GET", "/health", headers: [])
        return mask(out)
    }
}
