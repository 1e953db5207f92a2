import Foundation
import HTTPKit
import HubSandbox
import Testing
@testable import HubClient

/// Throughput of the client against the sandbox, over both transports. Off by default;
/// `scripts/bench-client` runs it (release build, `HUBSCRIPT_BENCH=1`).
@Suite("Client benchmark", .enabled(if: ProcessInfo.processInfo.environment["HUBSCRIPT_BENCH"] != nil))
struct ClientBenchmarkTests {
    static func measure(_ label: String, _ kind: TransportKind, count: Int, threads: Int, unit: String = "request",
                        _ body: @Sendable (Int) throws -> Void) rethrows {
        let start = Date()
        let failures = ClientLock(0)
        DispatchQueue.concurrentPerform(iterations: threads) { worker in
            for i in stride(from: worker, to: count, by: threads) {
                do { try body(i) } catch { failures.withLock { $0 += 1 } }
            }
        }
        let seconds = Date().timeIntervalSince(start)
        let line = String(format: "%@ %@: %d %@s on %d thread(s) in %.3f s = %.0f µs/%@, %.0f %@s/s",
                          kind.rawValue, label, count, unit, threads, seconds, seconds / Double(count) * 1e6, unit, Double(count) / seconds, unit)
        print("bench-client: " + line)
        #expect(failures.withLock { $0 } == 0)
    }

    @Test("reads and keyed grants", arguments: TransportKind.allCases)
    func throughput(kind: TransportKind) throws {
        let h = try SandboxHarness(kind, options: SandboxOptions(scale: .init(users: 1_200, auditEvents: 100), rateLimits: .off))
        let client = try h.jobsClient()
        let users = try client.paginate(path: "/users", query: [("status", "active")]).allItems().compactMap { $0["id"]?.stringValue }
        try Self.measure("GET /users/{id}", kind, count: 2_000, threads: 1) { i in _ = try client.get("/users/\(users[i % users.count])") }
        try Self.measure("GET /users/{id}", kind, count: 2_000, threads: 4) { i in _ = try client.get("/users/\(users[i % users.count])") }
        let holders = try h.livePersonal(client, app: "app_analytics")
        let targets = Array(users.filter { holders[$0] == nil }.prefix(500))
        try Self.measure("POST grant", kind, count: targets.count, threads: 4) { i in
            _ = try client.post("/users/\(targets[i])/entitlements", body: ["application_id": "app_analytics", "source": "trial"],
                                idempotencyKey: "bench-\(targets[i])")
        }
        try Self.measure("paginate /audit-events (every page, limit 100)", kind, count: 20, threads: 1, unit: "walk") { _ in
            _ = try client.paginate(path: "/audit-events", limit: 100).allItems()
        }
    }
}
