import Foundation
import HTTPKit
import Testing
@testable import HubClient

@Suite("Rate governor")
struct GovernorTests {
    @Test("paces under the limit: a burst of the bucket, then 97% of limit/60 per second")
    func pacing() {
        let clock = FakeClock()
        let governor = RateGovernor(limitPerMinute: 120, clock: clock)
        for _ in 0..<120 { governor.acquire() }
        #expect(clock.realSleeps.isEmpty)
        let start = clock.now()
        for _ in 0..<60 { governor.acquire() }
        // 60 more at safety · 2 per second (0.97 · 2 = 1.94 a second).
        let rate = RateGovernor.safety * 2
        #expect(abs(clock.now() - start - 60 / rate) < 0.001)
        #expect(clock.realSleeps.allSatisfy { abs($0 - 1 / rate) < 0.001 })
    }

    @Test("the client keeps 150 requests at 100/min to the pace", arguments: TransportKind.allCases)
    func clientPacing(kind: TransportKind) throws {
        let h = try Harness(kind, configure: { $0.rateLimitPerMinute = 100 }) { _, _ in jsonResponse(["ok": true]) }
        let start = h.clock.now()
        for _ in 0..<150 { _ = try h.client.get("/users/me") }
        // 100 from the full bucket, then 50 at 0.6 s / safety each.
        #expect(abs(h.clock.now() - start - 30 / RateGovernor.safety) < 0.01)
        #expect(h.requests.count == 150)
    }

    @Test("limit 0 turns pacing off")
    func off() {
        let clock = FakeClock()
        let governor = RateGovernor(limitPerMinute: 0, clock: clock)
        for _ in 0..<10_000 { governor.acquire() }
        #expect(clock.realSleeps.isEmpty)
    }

    @Test("RateLimit-Remaining 0 waits for one token (from Reset and Limit); a lower Remaining pulls the bucket down", arguments: TransportKind.allCases)
    func serverHeaders(kind: TransportKind) throws {
        let h = try Harness(kind, configure: { $0.rateLimitPerMinute = 60 }) { _, index in
            switch index {
            // Empty, full again in 12 s (no Limit header): wait all 12 s.
            case 0: return jsonResponse(["ok": true], headers: [("RateLimit-Remaining", "0"), ("RateLimit-Reset", "12")])
            case 1: return jsonResponse(["ok": true], headers: [("RateLimit-Remaining", "1"), ("RateLimit-Reset", "30")])
            // Empty, 60 tokens back in 120 s: one token in 2 s (slower than our own 1/s).
            case 4: return jsonResponse(["ok": true], headers: [("RateLimit-Limit", "60"), ("RateLimit-Remaining", "0"), ("RateLimit-Reset", "120")])
            default: return jsonResponse(["ok": true])
            }
        }
        _ = try h.client.get("/a")
        #expect(h.clock.realSleeps.isEmpty)
        _ = try h.client.get("/b")
        #expect(h.clock.realSleeps == [12])
        // Remaining 1: one more at once, then the next waits for a refill (1/s).
        _ = try h.client.get("/c")
        #expect(h.clock.realSleeps == [12])
        _ = try h.client.get("/d")
        #expect(h.clock.realSleeps.count == 2)
        #expect(abs(h.clock.realSleeps[1] - 1 / RateGovernor.safety) < 0.001)
        _ = try h.client.get("/e")
        _ = try h.client.get("/f")
        #expect(h.clock.realSleeps.count == 4)
        #expect(abs(h.clock.realSleeps[3] - 2) < 0.001)
    }

    @Test("concurrent callers share the pace")
    func concurrent() {
        let clock = FakeClock(advancesOnSleep: false)
        let governor = RateGovernor(limitPerMinute: 60, clock: clock)
        DispatchQueue.concurrentPerform(iterations: 90) { _ in governor.acquire() }
        // 60 immediate, 30 reserved 1/safety s apart: the reservations add up to (1+2+…+30)/safety s.
        let waits = clock.realSleeps.sorted()
        #expect(waits.count == 30)
        #expect(abs(waits.reduce(0, +) - 465 / RateGovernor.safety) < 1)
    }
    @Test("a RateLimit-Limit below the governor's lowers its pace; a higher one never raises it")
    func learnsLowerLimit() {
        let clock = FakeClock()
        let governor = RateGovernor(limitPerMinute: 60, clock: clock)
        governor.observe(HTTPHeaders([("RateLimit-Limit", "30"), ("RateLimit-Remaining", "30"), ("RateLimit-Reset", "0")]))
        #expect(governor.limitPerMinute == 30)
        governor.observe(HTTPHeaders([("RateLimit-Limit", "100"), ("RateLimit-Remaining", "100"), ("RateLimit-Reset", "0")]))
        #expect(governor.limitPerMinute == 30)
        for _ in 0..<30 { governor.acquire() }
        #expect(clock.realSleeps.isEmpty)
        governor.acquire()
        #expect(clock.realSleeps.count == 1)
        #expect(abs(clock.realSleeps[0] - 60 / (30 * RateGovernor.safety)) < 0.001)
    }

    @Test("each class paces on its own answers: an empty grant bucket holds grants, not reads", arguments: TransportKind.allCases)
    func classHeaders(kind: TransportKind) throws {
        let h = try Harness(kind, configure: { $0.rateLimitPerMinute = 100 }) { request, _ in
            request.method == "POST"
                ? jsonResponse(["ok": true], headers: [("RateLimit-Limit", "20"), ("RateLimit-Remaining", "0"), ("RateLimit-Reset", "60")])
                : jsonResponse(["ok": true], headers: [("RateLimit-Limit", "100"), ("RateLimit-Remaining", "99"), ("RateLimit-Reset", "1")])
        }
        _ = try h.client.post("/users/usr_1/entitlements", body: [:], idempotencyKey: "k1")
        for _ in 0..<20 { _ = try h.client.get("/users") }
        #expect(h.clock.realSleeps.isEmpty)
        _ = try h.client.post("/users/usr_2/entitlements", body: [:], idempotencyKey: "k2")
        // The grant bucket is empty: one token takes 60 s / 20 at the governor's pace.
        #expect(h.clock.realSleeps.count == 1)
        #expect(abs((h.clock.realSleeps.first ?? 0) - 3 / RateGovernor.safety) < 0.001)
    }

    @Test("grants go at their class's pace while reads fill the caller's bucket", arguments: TransportKind.allCases)
    func grantsAndReads(kind: TransportKind) throws {
        let h = try Harness(kind, configure: { $0.rateLimitPerMinute = 100 }) { _, _ in jsonResponse(["ok": true]) }
        for n in 0..<21 { _ = try h.client.post("/users/usr_\(n)/entitlements", body: [:], idempotencyKey: "k\(n)") }
        // 20 from the grant bucket, the 21st waits for one grant token.
        #expect(h.clock.realSleeps.count == 1)
        #expect(abs(h.clock.realSleeps[0] - 3 / RateGovernor.safety) < 0.001)
        // The caller's bucket has 79 left (+ refill): reads go at once.
        for _ in 0..<79 { _ = try h.client.get("/users") }
        #expect(h.clock.realSleeps.count == 1)
    }

    @Test("a token refresh counts against its class only (it is anonymous)", arguments: TransportKind.allCases)
    func refreshClass(kind: TransportKind) throws {
        let h = try Harness(kind, configure: { $0.rateLimitPerMinute = 100 }) { _, _ in jsonResponse(["ok": true]) }
        func refresh() throws {
            _ = try h.client.send(HubRequest(.post, "/auth/token/refresh", body: ["refresh_token": "srt_x"], authenticated: false))
        }
        for _ in 0..<30 { try refresh() }
        for _ in 0..<100 { _ = try h.client.get("/users") }
        #expect(h.clock.realSleeps.isEmpty)
        try refresh()
        #expect(h.clock.realSleeps.count == 1)
        #expect(abs(h.clock.realSleeps[0] - 2 / RateGovernor.safety) < 0.001)
    }

    @Test("notification sends are a class of their own (600 a minute)")
    func sendClass() {
        #expect(RateClass.of(method: "POST", path: "/applications/app_1/notifications") == .notificationSend)
        #expect(RateClass.of(method: "GET", path: "/applications/app_1/notifications") == nil)
        #expect(RateClass.notificationSend.limitPerMinute == 600)
    }
}
