import Foundation
import HTTPKit
import HubSandbox
import Testing
@testable import HubClient

@Suite("Faults against HubSandbox")
struct SandboxFaultTests {
    static let app = "app_chat"
    static let grants = 500

    static func grantEvents(_ client: HubClient) throws -> [HubJSON] {
        try client.paginate(path: "/audit-events", query: [("action", "entitlement.granted"), ("application_id", app)]).allItems()
    }

    @Test("~20% faults incl. lost-after-commit: 500 keyed grants land exactly once", arguments: TransportKind.allCases)
    func grantsUnderFaults(kind: TransportKind) throws {
        let faults = FaultSpec(errorRate: 0.08, unavailableRate: 0.05, retryAfterSeconds: 1, lostRate: 0.08, seed: 2026)
        let h = try SandboxHarness(kind, options: SandboxOptions(scale: .init(users: 900, auditEvents: 100), rateLimits: .off, faults: faults))
        // Enough attempts that 0.2^n is negligible for 500 writes; sleeps are on the fake clock.
        let client = try h.jobsClient { $0.retry = RetryPolicy(maxAttempts: 12) }

        let users = try client.paginate(path: "/users", query: [("status", "active")]).allItems().compactMap { $0["id"]?.stringValue }
        let before = try h.livePersonal(client, app: Self.app)
        let eventsBefore = try Self.grantEvents(client).count
        let targets = Array(users.filter { before[$0] == nil }.prefix(Self.grants))
        try #require(targets.count == Self.grants)

        let failures = ClientLock([String]())
        let replays = ClientLock(0)
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for user in targets.enumerated().filter({ $0.offset % 4 == worker }).map(\.element) {
                do {
                    let response = try client.post("/users/\(user)/entitlements", body: ["application_id": .string(Self.app), "source": "admin_grant"],
                                                   idempotencyKey: "fault-test-\(user)-\(Self.app)")
                    if response.replayed { replays.withLock { $0 += 1 } }
                } catch {
                    failures.withLock { $0.append("\(user): \(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 } == [])

        let after = try h.livePersonal(client, app: Self.app)
        #expect(targets.allSatisfy { after[$0] == 1 })
        #expect(after.values.reduce(0, +) - before.values.reduce(0, +) == Self.grants)
        let events = try Self.grantEvents(client)
        #expect(events.count - eventsBefore == Self.grants)
        // Newest first: the new events are the first ones.
        let eventTargets = events.prefix(events.count - eventsBefore).compactMap { $0["target_user_id"]?.stringValue }
        #expect(Set(eventTargets) == Set(targets))
        #expect(eventTargets.count == Self.grants)

        // The faults really happened, and lost responses were recovered by replay.
        #expect(h.count("dropped") > 10)
        #expect(h.count("5xx") > 20)
        #expect(replays.withLock { $0 } > 10)
        #expect(h.count("POST /users/\(targets[0])/entitlements") >= 1)
    }
}
