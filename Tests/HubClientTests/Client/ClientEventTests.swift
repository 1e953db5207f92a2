import Foundation
import HTTPKit
import Testing
@testable import HubClient

/// `HubClientOptions.observe`: every answer, retry and rate-limit wait is told, before
/// the wait starts (a 429 or a pacing pause is never invisible: people must see why a run stands still).
@Suite("Client events")
struct ClientEventTests {
    final class Events: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [HubClientEvent] = []
        var all: [HubClientEvent] { lock.withLock { list } }
        func add(_ e: HubClientEvent) { lock.withLock { list.append(e) } }
        /// The events as people see them (the fake clock does not move during a call: 0 ms).
        var texts: [String] { all.map(\.text) }
    }

    @Test("a 429 is announced as a wait the Hub asked for, then retried")
    func rateLimited() throws {
        let events = Events()
        let h = try Harness(.inProcess, configure: { $0.observe = events.add },
                            RetryTests.failingThenOK(1) { errorResponse(429, "rate_limited", headers: [("Retry-After", "3")]) })
        _ = try h.client.get("/users")
        #expect(events.texts == [
            "hub: GET /users → 429 (0 ms)",
            "hub: retrying GET /users in 3 s (attempt 2 of 3): 429 rate_limited",
            "rate limited by the Hub, waiting 3 s",
            "hub: GET /users → 200 (0 ms)",
        ])
        #expect(events.all.filter(\.isNotableWait) == [.rateLimitWait(seconds: 3, reason: .hub)])
        #expect(h.clock.realSleeps == [3])
    }

    @Test("a 5xx retry says when and why")
    func serverErrorRetry() throws {
        let events = Events()
        let h = try Harness(.inProcess, configure: { $0.observe = events.add },
                            RetryTests.failingThenOK(1) { errorResponse(500, "internal_error") })
        _ = try h.client.get("/users/usr_1")
        #expect(events.texts == [
            "hub: GET /users/usr_1 → 500 (0 ms)",
            "hub: retrying GET /users/usr_1 in 0.4 s (attempt 2 of 3): 500 internal_error",
            "hub: GET /users/usr_1 → 200 (0 ms)",
        ])
        #expect(events.all.filter(\.isNotableWait).isEmpty)
    }

    @Test("the client's own pacing is announced, and is notable from one second")
    func pacing() throws {
        let events = Events()
        let h = try Harness(.inProcess, configure: { $0.observe = events.add; $0.rateLimitPerMinute = 1 }) { _, _ in
            jsonResponse(["ok": true])
        }
        _ = try h.client.get("/users")
        _ = try h.client.get("/users")
        // One token a minute at 97 %: the second request waits 60/0.97 s (61.9).
        let waits = events.all.filter(\.isNotableWait)
        #expect(waits.count == 1)
        #expect(events.texts == ["hub: GET /users → 200 (0 ms)", "pacing requests under the rate limit, waiting 62 s",
                                 "hub: GET /users → 200 (0 ms)"])
        #expect(HubClientEvent.rateLimitWait(seconds: 0.5, reason: .pacing).isNotableWait == false)
        #expect(HubClientEvent.rateLimitWait(seconds: 0.5, reason: .pacing).text == "pacing requests under the rate limit, waiting 0.5 s")
    }
}
