import Foundation
import HTTPKit

/// Paces requests under a per-minute limit so the client slows itself down instead of
/// hitting `429`.
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
/// key), a `RateLimit-Limit` below the governor's own lowers it (the Hub's bucket is
/// smaller than documented; never raised, so a header describing another bucket cannot
/// speed a class up), and `Retry-After` on a 429 pauses every caller. A limit of 0
/// turns pacing off; server pauses still apply.
final class RateGovernor: Sendable {
    private struct State {
        var tokens: Double
        var updatedAt: TimeInterval
        var pausedUntil: TimeInterval
        /// The limit paced at: the configured one, or a lower one the Hub reported.
        var limit: Double

        var ratePerSecond: Double { RateGovernor.safety * limit / 60 }
    }

    /// The configured limit (0: pacing off).
    let configuredLimit: Int
    private let clock: any HubClock
    private let state: ClientLock<State>

    init(limitPerMinute: Int, clock: any HubClock) {
        configuredLimit = max(0, limitPerMinute)
        self.clock = clock
        state = ClientLock(State(tokens: Double(max(0, limitPerMinute)), updatedAt: clock.now(), pausedUntil: 0,
                                 limit: Double(max(0, limitPerMinute))))
    }

    /// The share of the limit the governor paces at.
    static let safety = 0.97

    /// The limit per minute the governor paces under now (0: pacing off).
    var limitPerMinute: Int { state.withLock { Int($0.limit) } }

    /// Reserves one request slot, sleeping until it is due. Before a wait, tells
    /// `beforeWaiting` how long and why (a server pause, or the client's own pacing).
    /// Returns the seconds waited.
    @discardableResult
    func acquire(beforeWaiting: (TimeInterval, HubClientEvent.WaitReason) -> Void = { _, _ in }) -> TimeInterval {
        let now = clock.now()
        let (wait, reason): (TimeInterval, HubClientEvent.WaitReason) = state.withLock { s in
            let pause = max(0, s.pausedUntil - now)
            guard s.limit > 0 else { return (pause, .hub) }
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
            guard s.limit > 0 else { return }
            refill(&s, now: now)
            if let limit = number("RateLimit-Limit"), limit >= 1, limit < s.limit {
                s.limit = limit
                s.tokens = min(s.tokens, limit)
            }
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
