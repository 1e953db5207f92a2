import Foundation
import HTTPKit
import HubSandbox
import Testing
@testable import HubClient

/// The client paces under the lower of what the Hub reports (`RateLimit-Limit`) and what
/// the profile says (`rate_limit_per_minute`): a Hub that reports no limit and a profile
/// that sets none mean no pacing; either one alone paces. Sandbox time runs on a manual
/// clock the client's sleeps advance, so the elapsed times are exact.
@Suite("Pacing under the reported and the configured limit")
struct ReportedRateTests {
    /// A client of `h` on the sandbox's clock, with `rateLimitPerMinute`.
    func client(_ h: SandboxHarness, _ clock: ManualClock, rateLimitPerMinute: Int?) throws -> HubClient {
        var options = HubClientOptions(rateLimitPerMinute: rateLimitPerMinute, clock: LinkedClock(sandboxClock: clock),
                                       random: FixedRandom())
        options.warn = { _ in }
        return try HubClient(baseURL: h.baseURL, credential: .apiKey(SandboxFixtures.jobsKeySecret), transport: h.transport,
                             options: options)
    }

    @Test("rate limits off send no RateLimit-* headers, and 300 reads go unpaced with no profile limit",
          arguments: TransportKind.allCases)
    func offIsUnpaced(kind: TransportKind) throws {
        let clock = ManualClock()
        let h = try SandboxHarness(kind, options: SandboxOptions(rateLimits: .off, clock: clock))
        var headers = HTTPHeaders()
        headers.add("Substratal-Version", "1")
        headers.add("Authorization", "Bearer \(SandboxFixtures.jobsKeySecret)")
        let answer = h.sandbox.handle(HTTPRequestMessage(method: "GET", target: "/users/\(SandboxFixtures.adaId)", headers: headers))
        #expect(answer.status == 200)
        #expect(answer.headers.fields.filter { $0.name.lowercased().hasPrefix("ratelimit-") }.isEmpty)

        let client = try client(h, clock, rateLimitPerMinute: nil)
        let start = clock.now()
        for _ in 0..<300 { _ = try client.get("/users/\(SandboxFixtures.adaId)") }
        #expect(clock.now().timeIntervalSince(start) == 0)
    }

    @Test("a profile limit far above the Hub's: the Hub's reported 100/min paces, no 429", arguments: TransportKind.allCases)
    func reportedLimitBelowProfile(kind: TransportKind) throws {
        let clock = ManualClock()
        let h = try SandboxHarness(kind, options: SandboxOptions(rateLimits: .standard, clock: clock))
        let client = try client(h, clock, rateLimitPerMinute: 1_000_000)
        let start = clock.now()
        for _ in 0..<150 { _ = try client.get("/users/\(SandboxFixtures.adaId)") }
        #expect(h.count("429") == 0)
        // 100 from the bucket, then 50 at 0.6 s / safety.
        #expect(abs(clock.now().timeIntervalSince(start) - 30 / RateGovernor.safety) < 0.5)
    }

    @Test("no profile limit: the Hub's reported limit paces, no 429", arguments: TransportKind.allCases)
    func reportedLimitAlone(kind: TransportKind) throws {
        let clock = ManualClock()
        let h = try SandboxHarness(kind, options: SandboxOptions(rateLimits: .standard, clock: clock))
        let client = try client(h, clock, rateLimitPerMinute: nil)
        let start = clock.now()
        for _ in 0..<150 { _ = try client.get("/users/\(SandboxFixtures.adaId)") }
        #expect(h.count("429") == 0)
        #expect(abs(clock.now().timeIntervalSince(start) - 30 / RateGovernor.safety) < 0.5)
    }

    @Test("a Hub that reports no limit: the profile's limit paces", arguments: TransportKind.allCases)
    func profileLimitAlone(kind: TransportKind) throws {
        let clock = ManualClock()
        let h = try SandboxHarness(kind, options: SandboxOptions(rateLimits: .off, clock: clock))
        let client = try client(h, clock, rateLimitPerMinute: 60)
        let start = clock.now()
        for _ in 0..<90 { _ = try client.get("/users/\(SandboxFixtures.adaId)") }
        // 60 from the bucket, then 30 at 1 s / safety.
        #expect(abs(clock.now().timeIntervalSince(start) - 30 / RateGovernor.safety) < 0.01)
    }

    @Test("without a configured limit nothing paces until one is reported; then it does, and a higher one never raises it")
    func governorLearns() {
        let clock = FakeClock()
        let governor = RateGovernor(limitPerMinute: nil, clock: clock)
        for _ in 0..<10_000 { governor.acquire() }
        #expect(clock.realSleeps.isEmpty)
        #expect(governor.limitPerMinute == 0)
        governor.observe(HTTPHeaders([("RateLimit-Limit", "60"), ("RateLimit-Remaining", "59"), ("RateLimit-Reset", "1")]))
        #expect(governor.limitPerMinute == 60)
        governor.observe(HTTPHeaders([("RateLimit-Limit", "6000"), ("RateLimit-Remaining", "5999"), ("RateLimit-Reset", "0")]))
        #expect(governor.limitPerMinute == 60)
        for _ in 0..<59 { governor.acquire() }
        #expect(clock.realSleeps.isEmpty)
        governor.acquire()
        #expect(clock.realSleeps.count == 1)
        #expect(abs(clock.realSleeps[0] - 1 / RateGovernor.safety) < 0.001)
    }

    @Test("a configured limit of 0 paces nothing, whatever the Hub reports")
    func zeroIsOff() {
        let clock = FakeClock()
        let governor = RateGovernor(limitPerMinute: 0, clock: clock)
        governor.observe(HTTPHeaders([("RateLimit-Limit", "10"), ("RateLimit-Remaining", "9"), ("RateLimit-Reset", "1")]))
        for _ in 0..<1_000 { governor.acquire() }
        #expect(clock.realSleeps.isEmpty)
        #expect(governor.limitPerMinute == 0)
    }

    @Test("a profile that does not set rate_limit_per_minute sets no limit of its own")
    func profileDefault() throws {
        let json = #"{"name":"p","hub_url":"https://hub.example.com","auth":{"kind":"session","email":"a@example.com"}}"#
        let profile = try JSONDecoder().decode(HubProfile.self, from: Data(json.utf8))
        #expect(profile.rateLimitPerMinute == nil)
        #expect(HubClientOptions().rateLimitPerMinute == nil)
    }
}
