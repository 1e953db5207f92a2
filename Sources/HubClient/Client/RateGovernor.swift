import Foundation
import HTTPKit

/// Paces requests under a per-minute limit so the client slows itself down instead of
/// hitting `429`.
///
/// The limit paced at is the lower of the configured one (the profile's
/// `rate_limit_per_minute`, or a class's documented limit) and the lowest
/// `RateLimit-Limit` the Hub has reported for this bucket; with neither (no
/// configured limit, and a server that sends no `RateLimit-*` headers, such as the
/// sandbox with rate limits off) there is nothing to pace under and requests go at
/// once. A reported limit is never raised by a later, higher one, so a header
/// describing another bucket cannot speed a class up.
///
/// A token bucket of `limit` tokens refilled at `safety · limit / 60` per second (`safety`
/// is 0.97: refilling exactly as fast as the Hub's own bucket lands each request on the
/// instant the Hub's token comes back, and rounding or jitter on either side then yields
/// a 429; the sandbox test of 150 calls at 100/min showed one. 3 % keeps a margin of
/// 18 ms a request at 100/min and still runs at over 95 % of the limit). Each request
/// reserves a token; when none is left the caller sleeps (on the injected clock) until
/// its reservation is due, so concurrent callers queue fairly. The Hub's
/// `RateLimit-Remaining` / `RateLimit-Reset` headers pull the bucket down when the
/// server has fewer tokens left than the client thinks (another process shares the
/// key), and `Retry-After` on a 429 pauses every caller. A configured limit of 0 turns
/// pacing off, reported limits included; server pauses still apply.
final class RateGovernor: Sendable {
    private struct State {
        var tokens: Double
        var updatedAt: TimeInterval
        var pausedUntil: TimeInterval
        /// The lowest limit the Hub reported (nil: none yet).
        var reported: Double?
        /// The limit paced at: the lower of the configured and the reported one;
        /// infinite while neither is known.
        var limit: Double

        var ratePerSecond: Double { RateGovernor.safety * limit / 60 }
        var paces: Bool { limit.isFinite && limit > 0 }
    }

    /// The configured limit (nil: none, pace under what the Hub reports; 0: pacing off).
    let configuredLimit: Int?
    private let clock: any HubClock
    private let state: ClientLock<State>

    /// `limitPerMinute`: the most requests a minute this bucket may send whatever the
    /// Hub says; nil for no limit of its own (the Hub's reported one only); 0 to pace
    /// nothing (the Hub's pauses still apply).
    init(limitPerMinute: Int?, clock: any HubClock) {
        configuredLimit = limitPerMinute.map { max(0, $0) }
        self.clock = clock
        let limit = configuredLimit.map(Double.init) ?? .infinity
        state = ClientLock(State(tokens: limit.isFinite ? limit : 0, updatedAt: clock.now(), pausedUntil: 0,
                                 reported: nil, limit: limit))
    }

    /// The share of the limit the governor paces at.
    static let safety = 0.97

    /// The limit per minute the governor paces under now (0: pacing off, or no limit known).
    var limitPerMinute: Int { state.withLock { $0.paces ? Int($0.limit) : 0 } }

    /// Reserves one request slot, sleeping until it is due. Before a wait, tells
    /// `beforeWaiting` how long and why (a server pause, or the client's own pacing).
    /// Returns the seconds waited.
    @discardableResult
    func acquire(beforeWaiting: (TimeInterval, HubClientEvent.WaitReason) -> Void = { _, _ in }) -> TimeInterval {
        let now = clock.now()
        let (wait, reason): (TimeInterval, HubClientEvent.WaitReason) = state.withLock { s in
            let pause = max(0, s.pausedUntil - now)
            guard s.paces else { return (pause, .hub) }
            refill(&s, now: now)
            s.tokens -= 1
            let deficit = s.tokens < 0 ? -s.tokens / s.ratePerSecond : 0
            return pause >= deficit ? (pause, .hub) : (deficit, .pacing)
        }
        if wait > 0 { beforeWaiting(wait, reason) }
        clock.sleep(wait)
        return wait
    }

    /// Reads the Hub's rate headers from a response. With nothing remaining, every caller
    /// pauses until one token is back: `RateLimit-Reset` is the time until the bucket is
    /// full again, so one token takes `Reset / (Limit - Remaining)` (all of `Reset`
    /// when no `RateLimit-Limit` came).
    func observe(_ headers: HTTPHeaders) {
        func number(_ name: String) -> Double? { headers[name].flatMap { Double(HTTPHeaders.trimmingWhitespace($0)) } }
        guard let remaining = number("RateLimit-Remaining") else { return }
        let reset = number("RateLimit-Reset") ?? 0
        let now = clock.now()
        state.withLock { s in
            if remaining <= 0, reset > 0 {
                let perToken = number("RateLimit-Limit").map { reset / max(1, $0 - remaining) } ?? reset
                s.pausedUntil = max(s.pausedUntil, now + perToken)
            }
            guard configuredLimit != 0 else { return }
            if let reported = number("RateLimit-Limit"), reported >= 1, reported < (s.reported ?? .infinity) {
                s.reported = reported
            }
            let limit = min(configuredLimit.map(Double.init) ?? .infinity, s.reported ?? .infinity)
            if !s.paces, limit.isFinite {
                // The first limit known: a full bucket from now on (Remaining below corrects it).
                s.tokens = limit
                s.updatedAt = now
            }
            s.limit = limit
            guard s.paces else { return }
            refill(&s, now: now)
            s.tokens = min(s.tokens, s.limit)
            if remaining < s.tokens { s.tokens = remaining }
        }
    }

    /// Pauses every caller for `seconds` (a 429's `Retry-After`).
    func pause(for seconds: TimeInterval) {
        let now = clock.now()
        state.withLock { s in s.pausedUntil = max(s.pausedUntil, now + seconds) }
    }

    private func refill(_ s: inout State, now: TimeInterval) {
        let elapsed = max(0, now - s.updatedAt)
        s.tokens = min(s.limit, s.tokens + elapsed * s.ratePerSecond)
        s.updatedAt = now
    }
}
