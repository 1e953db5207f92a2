import Foundation
import SystemText
import HTTPKit
import Synchronization

/// Paces sends under Dispatch's limit per machine token (600 sends a minute per key:
/// docs/hub-api.md, "Rate limits"), so a bulk recipe waits for slots instead of collecting `429`s.
///
/// A token bucket of `limit` tokens refilled at 97 % of `limit / 60` per second (the
/// margin keeps rounding and jitter from landing a send on the instant the server's
/// token comes back); each send reserves a token and sleeps until it is due, so
/// concurrent senders queue fairly. The answers' `RateLimit-Remaining` pulls the bucket
/// down when the server has fewer tokens than the pacer thinks (another process uses
/// the token), and a `RateLimit-Limit` below the pacer's lowers it (never raises it).
/// A limit of 0 turns pacing off. Thread-safe.
public final class DispatchSendPacer: Sendable {
    public static let defaultLimitPerMinute = 600
    /// The share of the limit paced at.
    public static let safety = 0.97

    /// The bucket: tokens left, when they were counted, and the limit paced under.
    private struct Bucket {
        var tokens: Double
        var updatedAt: TimeInterval
        var limit: Double

        var rate: Double { DispatchSendPacer.safety * limit / 60 }

        mutating func refill(_ t: TimeInterval) {
            tokens = min(limit, tokens + max(0, t - updatedAt) * rate)
            updatedAt = t
        }
    }

    private let bucket: Mutex<Bucket>
    private let now: @Sendable () -> TimeInterval

    /// `now`: seconds on a clock that never jumps (the client's sleeps must advance it).
    public init(limitPerMinute: Int = DispatchSendPacer.defaultLimitPerMinute,
                now: @escaping @Sendable () -> TimeInterval = { MonotonicTime.seconds() }) {
        let limit = Double(max(0, limitPerMinute))
        bucket = Mutex(Bucket(tokens: limit, updatedAt: now(), limit: limit))
        self.now = now
    }

    /// The limit per minute paced under now (0: off).
    public var limitPerMinute: Int { bucket.withLock { Int($0.limit) } }

    /// Reserves one send and returns how long to wait before it (0: at once).
    public func reserve() -> TimeInterval {
        let t = now()
        return bucket.withLock { b in
            guard b.limit > 0 else { return 0 }
            b.refill(t)
            b.tokens -= 1
            return b.tokens < 0 ? -b.tokens / b.rate : 0
        }
    }

    /// Reads `RateLimit-Limit` / `RateLimit-Remaining` from an answer.
    public func observe(_ headers: HTTPHeaders) {
        func number(_ name: String) -> Double? { headers[name].flatMap { Double(HTTPHeaders.trimmingWhitespace($0)) } }
        let t = now()
        bucket.withLock { b in
            guard b.limit > 0 else { return }
            b.refill(t)
            if let reported = number("RateLimit-Limit"), reported >= 1, reported < b.limit {
                b.limit = reported
                b.tokens = min(b.tokens, reported)
            }
            if let remaining = number("RateLimit-Remaining"), remaining < b.tokens { b.tokens = remaining }
        }
    }
}
