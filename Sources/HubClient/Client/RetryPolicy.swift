import Foundation
import HTTPKit

/// How the client retries. Reads retry on transport errors and 5xx; writes only when
/// they carry an Idempotency-Key. A server that speaks the wrong protocol for the URL
/// (`wrong_protocol`: plain HTTP on an `https://` port) is never retried. `429`, `503` with `Retry-After` and
/// `idempotency_key_in_flight` wait the server's delay instead of the backoff.
public struct RetryPolicy: Sendable, Equatable {
    /// Attempts per request, the first included (3 = two retries).
    public var maxAttempts: Int
    /// The first backoff delay in seconds; it doubles per attempt.
    public var baseDelay: TimeInterval
    /// The largest backoff delay.
    public var maxDelay: TimeInterval
    /// The longest server-requested wait (`Retry-After`) the client honours; a longer
    /// one fails at once so a recipe never hangs for hours.
    public var maxRetryAfter: TimeInterval
    /// The wait before retrying `409 idempotency_key_in_flight` when the Hub sends no
    /// `Retry-After`.
    public var inFlightDelay: TimeInterval
    /// How long one call keeps waiting on `409 idempotency_key_in_flight` in all. Such
    /// waits spend no attempts: the key is an earlier attempt of this very write that the
    /// Hub is still running, or one a killed process left reserved, which the Hub
    /// abandons after about 60 s (so a resume right after a `kill -9` waits it out).
    public var maxInFlightWait: TimeInterval

    public init(maxAttempts: Int = 3, baseDelay: TimeInterval = 0.5, maxDelay: TimeInterval = 8,
                maxRetryAfter: TimeInterval = 300, inFlightDelay: TimeInterval = 1, maxInFlightWait: TimeInterval = 90) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.maxRetryAfter = maxRetryAfter
        self.inFlightDelay = inFlightDelay
        self.maxInFlightWait = maxInFlightWait
    }

    /// The jittered backoff before attempt `attempt + 1` (attempt counts from 1):
    /// uniformly between half and all of `baseDelay · 2^(attempt-1)`, capped at `maxDelay`.
    public func backoff(afterAttempt attempt: Int, random: any HubRandomSource) -> TimeInterval {
        let exponential = min(maxDelay, baseDelay * pow(2, Double(max(0, attempt - 1))))
        return exponential * (0.5 + 0.5 * random.nextUnit())
    }

    /// `Retry-After` in seconds: delta-seconds or an HTTP date (relative to `now`).
    static func retryAfter(_ headers: HTTPHeaders, now: Date = Date()) -> TimeInterval? {
        guard let raw = headers["Retry-After"].map({ String(HTTPHeaders.trimmingWhitespace($0)) }) else { return nil }
        if let seconds = Double(raw) { return max(0, seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: raw) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}
