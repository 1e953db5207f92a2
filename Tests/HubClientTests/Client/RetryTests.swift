import Foundation
import HTTPKit
import Testing
@testable import HubClient

@Suite("Retries")
struct RetryTests {
    /// Answers `failures` with `failure`, then 200 with the attempt number.
    static func failingThenOK(_ failures: Int, _ failure: @escaping @Sendable () -> HTTPResponseMessage) -> ScriptedHub.Script {
        { _, index in index < failures ? failure() : jsonResponse(["attempt": .number(Double(index + 1))]) }
    }

    @Test("reads retry 5xx with jittered exponential backoff", arguments: TransportKind.allCases)
    func readsRetry5xx(kind: TransportKind) throws {
        let h = try Harness(kind, Self.failingThenOK(2) { errorResponse(500, "internal_error") })
        let response = try h.client.get("/users/usr_1")
        #expect(response.json["attempt"] == 3)
        #expect(h.requests.count == 3)
        // base 0.5 s, random 0.5 → factor 0.75: 0.375 then 0.75.
        #expect(h.clock.realSleeps == [0.375, 0.75])
        // Each attempt is a new request id.
        #expect(Set(h.requests.compactMap { $0.headers["X-Request-Id"] }).count == 3)
    }

    @Test("reads give up after maxAttempts", arguments: TransportKind.allCases)
    func readsGiveUp(kind: TransportKind) throws {
        let h = try Harness(kind) { _, _ in errorResponse(502, "internal_error") }
        let err = hubError { try h.client.get("/users") }
        #expect(err?.code == "internal_error")
        #expect(h.requests.count == 3)
    }

    @Test("reads retry lost responses", arguments: TransportKind.allCases)
    func readsRetryTransport(kind: TransportKind) throws {
        let h = try Harness(kind, Self.failingThenOK(1) { HTTPResponseMessage(status: 200, dropped: true) })
        #expect(try h.client.get("/users/usr_1").json["attempt"] == 2)
    }

    @Test("writes without an Idempotency-Key are never resent", arguments: TransportKind.allCases)
    func writesWithoutKey(kind: TransportKind) throws {
        let h = try Harness(kind) { request, _ in
            request.path == "/lost" ? HTTPResponseMessage(status: 201, dropped: true) : errorResponse(500, "internal_error")
        }
        #expect(hubError { try h.client.post("/users/usr_1/suspend", body: ["reason": "x"]) }?.code == "internal_error")
        #expect(hubError { try h.client.post("/lost", body: [:]) }?.code == HubError.Code.transportError)
        #expect(hubError { try h.client.patch("/users/usr_1", body: ["display_name": "x"]) }?.code == "internal_error")
        #expect(hubError { try h.client.delete("/api-keys/key_1") }?.code == "internal_error")
        #expect(h.requests.count == 4)
        #expect(h.clock.realSleeps.isEmpty)
    }

    @Test("writes with an Idempotency-Key retry with the same key", arguments: TransportKind.allCases)
    func writesWithKey(kind: TransportKind) throws {
        let h = try Harness(kind) { request, index in
            switch index {
            case 0: return HTTPResponseMessage(status: 201, dropped: true)
            case 1: return errorResponse(500, "internal_error")
            default: return jsonResponse(status: 201, ["id": "ent_1"], headers: [("Idempotent-Replayed", "true")])
            }
        }
        let response = try h.client.post("/users/usr_1/entitlements", body: ["application_id": "app_wiki"], idempotencyKey: "grant-1")
        #expect(response.replayed)
        #expect(h.requests.count == 3)
        #expect(h.requests.allSatisfy { $0.headers["Idempotency-Key"] == "grant-1" })
        #expect(Set(h.requests.map(\.body)).count == 1)
    }

    @Test("503 with Retry-After: reads wait and retry, writes only with a key", arguments: TransportKind.allCases)
    func serviceUnavailable(kind: TransportKind) throws {
        let h = try Harness(kind) { request, _ in
            let earlier = request.headers["X-Test-Attempt"] == "2"
            return earlier ? jsonResponse(["ok": true]) : errorResponse(503, "service_unavailable", headers: [("Retry-After", "7")])
        }
        // The scripted Hub fails every request; count and sleeps tell the story.
        #expect(hubError { try h.client.get("/users") }?.code == "service_unavailable")
        #expect(h.requests.count == 3)
        #expect(h.clock.realSleeps == [7, 7])
        #expect(hubError { try h.client.post("/users/usr_1/suspend", body: [:]) }?.code == "service_unavailable")
        #expect(h.requests.count == 4)
        #expect(hubError { try h.client.post("/users/usr_1/suspend", body: [:], idempotencyKey: "k") }?.code == "service_unavailable")
        #expect(h.requests.count == 7)
        #expect(h.clock.realSleeps == [7, 7, 7, 7])
    }

    @Test("429 honours Retry-After for every method", arguments: TransportKind.allCases)
    func rateLimited(kind: TransportKind) throws {
        let h = try Harness(kind, Self.failingThenOK(1) { errorResponse(429, "rate_limited", headers: [("Retry-After", "3")]) })
        let response = try h.client.post("/users/usr_1/suspend", body: ["reason": "x"])
        #expect(response.json["attempt"] == 2)
        #expect(h.clock.realSleeps == [3])
    }

    @Test("idempotency_key_in_flight is retried after 1 s", arguments: TransportKind.allCases)
    func inFlight(kind: TransportKind) throws {
        let h = try Harness(kind, Self.failingThenOK(2) { errorResponse(409, "idempotency_key_in_flight") })
        let response = try h.client.post("/users/usr_1/entitlements", body: [:], idempotencyKey: "k")
        #expect(response.json["attempt"] == 3)
        #expect(h.clock.realSleeps == [1, 1])
        // The Hub's Retry-After, when sent, wins.
        let paced = try Harness(kind, Self.failingThenOK(1) { errorResponse(409, "idempotency_key_in_flight", headers: [("Retry-After", "2")]) })
        _ = try paced.client.post("/users/usr_1/entitlements", body: [:], idempotencyKey: "k")
        #expect(paced.clock.realSleeps == [2])
    }

    @Test("in-flight waits spend no attempts: a key a killed process left reserved is waited out, within a bound")
    func inFlightOutlastsAttempts() throws {
        // The sandbox abandons a reservation after 60 s: 45 answers of "in flight", then done.
        let h = try Harness(.inProcess, Self.failingThenOK(45) { errorResponse(409, "idempotency_key_in_flight") })
        let response = try h.client.post("/users/usr_1/entitlements", body: [:], idempotencyKey: "k")
        #expect(response.json["attempt"] == 46)
        #expect(h.clock.realSleeps == Array(repeating: 1, count: 45))
        // Beyond maxInFlightWait the call fails with the Hub's error, having waited it all.
        let stuck = try Harness(.inProcess, configure: { $0.retry.maxInFlightWait = 5 }) { _, _ in
            errorResponse(409, "idempotency_key_in_flight")
        }
        #expect(hubError { try stuck.client.post("/users/usr_1/entitlements", body: [:], idempotencyKey: "k") }?.code
                == "idempotency_key_in_flight")
        #expect(stuck.clock.realSleeps == [1, 1, 1, 1, 1])
        #expect(stuck.requests.count == 6)
    }

    @Test("a Retry-After beyond the cap fails at once")
    func retryAfterCap() throws {
        let h = try Harness(.inProcess, configure: { $0.retry.maxRetryAfter = 60 }) { _, _ in
            errorResponse(503, "service_unavailable", headers: [("Retry-After", "3600")])
        }
        #expect(hubError { try h.client.get("/users") }?.code == "service_unavailable")
        #expect(h.requests.count == 1)
    }

    @Test("backoff doubles, is jittered between half and all, and is capped")
    func backoffShape() {
        let policy = RetryPolicy(maxAttempts: 10, baseDelay: 0.5, maxDelay: 4)
        #expect(policy.backoff(afterAttempt: 1, random: FixedRandom(value: 0)) == 0.25)
        #expect(policy.backoff(afterAttempt: 2, random: FixedRandom(value: 0)) == 0.5)
        #expect(policy.backoff(afterAttempt: 3, random: FixedRandom(value: 0.999_999)) > 1.99)
        #expect(policy.backoff(afterAttempt: 9, random: FixedRandom(value: 0.999_999)) <= 4)
    }

    @Test("Retry-After accepts seconds and HTTP dates")
    func retryAfterParsing() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(RetryPolicy.retryAfter(["Retry-After": "12"], now: now) == 12)
        #expect(RetryPolicy.retryAfter(["Retry-After": "Tue, 14 Nov 2023 22:13:40 GMT"], now: now) == 20)
        #expect(RetryPolicy.retryAfter(["Retry-After": "soon"], now: now) == nil)
        #expect(RetryPolicy.retryAfter([:], now: now) == nil)
    }
}
