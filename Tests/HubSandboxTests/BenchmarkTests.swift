import Foundation
import XCTest
@testable import HubSandbox

/// Rough cost per request in `handle`. A benchmark, not a test: it prints µs per request
/// and asserts no speed. Off unless `HUBSCRIPT_BENCH=1` (release figures:
/// `HUBSCRIPT_BENCH=1 swift test -c release --filter HubSandboxTests.BenchmarkTests`).
final class BenchmarkTests: XCTestCase {
    func testCostPerRequest() throws {
        try XCTSkipUnless(ProcessInfo.processInfo.environment["HUBSCRIPT_BENCH"] != nil, "a benchmark: set HUBSCRIPT_BENCH=1")
        let started = Date()
        let hub = try HubSandbox(options: SandboxOptions(scale: .init(users: 5_000, auditEvents: 200_000), rateLimits: .off))
        let seedSeconds = Date().timeIntervalSince(started)
        let token = hub.accessToken("support@example.com")
        let n = 2_000
        var t = Date()
        for _ in 0..<n { _ = hub.call("GET", "/users?limit=25", token: token) }
        let listMicros = Date().timeIntervalSince(t) / Double(n) * 1e6
        t = Date()
        for _ in 0..<n { _ = hub.call("GET", "/audit-events?limit=25&target_user_id=usr_ada") }
        let auditMicros = Date().timeIntervalSince(t) / Double(n) * 1e6
        let ids = (hub.call("GET", "/users?status=active&limit=100").json["data"]?.items ?? []).compactMap { $0["id"]?.string }
        t = Date()
        var grants = 0
        for (i, id) in ids.enumerated() {
            let r = hub.call("POST", "/users/\(id)/entitlements", body: #"{"application_id":"app_hub","source":"admin_grant"}"#,
                             headers: [("Idempotency-Key", "bench-\(i)")])
            if r.status == 201 { grants += 1 }
        }
        let grantMicros = Date().timeIntervalSince(t) / Double(max(1, ids.count)) * 1e6
        print(String(format: "HubSandbox bench: seed 5000 users + 200k events %.2f s; GET /users?limit=25 %.0f µs; GET /audit-events %.0f µs; grant %.0f µs",
                     seedSeconds, listMicros, auditMicros, grantMicros))
        XCTAssertEqual(grants, ids.count)
        let fileMicros = try fileGrantMicros()
        print(String(format: "HubSandbox bench: grant on a WAL file store %.0f µs", fileMicros))
    }

    /// µs per grant with `.file` storage (WAL, synchronous=NORMAL), default scale.
    func fileGrantMicros() throws -> Double {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("hubsandbox-bench-\(UUID().uuidString).sqlite")
        defer { for ext in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + ext) } }
        let hub = try HubSandbox(options: SandboxOptions(storage: .file(url), rateLimits: .off))
        let ids = (hub.call("GET", "/users?status=active&limit=100").json["data"]?.items ?? []).compactMap { $0["id"]?.string }
        let t = Date()
        for (i, id) in ids.enumerated() {
            let r = hub.call("POST", "/users/\(id)/entitlements", body: #"{"application_id":"app_hub","source":"trial"}"#,
                             headers: [("Idempotency-Key", "file-\(i)")])
            XCTAssertEqual(r.status, 201)
        }
        return Date().timeIntervalSince(t) / Double(max(1, ids.count)) * 1e6
    }
}
