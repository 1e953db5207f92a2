import Foundation

/// Token buckets keyed by caller and purpose. Not thread-safe; the sandbox lock guards it.
///
/// A bucket holds `capacity` tokens and refills continuously at `capacity / window`.
/// `RateLimit-Reset` is the whole seconds until the bucket is full again; `Retry-After`
/// on a 429 is the whole seconds until one token is available (at least 1).
final class RateLimiter {
    struct Outcome {
        let allowed: Bool
        let limit: Int
        let remaining: Int
        let reset: Int
        let retryAfter: Int
    }

    private struct Bucket { var tokens: Double; var last: Double }
    private var buckets: [String: Bucket] = [:]
    let enforced: Bool

    init(enforced: Bool) { self.enforced = enforced }

    /// Takes one token from bucket `key` at time `now` (seconds). When the limiter is not
    /// enforced, always allows and reports a full bucket.
    func take(_ key: String, capacity: Int, window: Double, now: Double) -> Outcome {
        guard enforced else { return Outcome(allowed: true, limit: capacity, remaining: capacity, reset: 0, retryAfter: 0) }
        let rate = Double(capacity) / window
        var b = buckets[key] ?? Bucket(tokens: Double(capacity), last: now)
        b.tokens = min(Double(capacity), b.tokens + max(0, now - b.last) * rate)
        b.last = now
        let allowed = b.tokens >= 1
        if allowed { b.tokens -= 1 }
        buckets[key] = b
        if buckets.count > 50_000 { buckets = buckets.filter { now - $0.value.last < window } }
        let reset = Int(((Double(capacity) - b.tokens) / rate).rounded(.up))
        let retry = allowed ? 0 : max(1, Int(((1 - b.tokens) / rate).rounded(.up)))
        return Outcome(allowed: allowed, limit: capacity, remaining: Int(b.tokens.rounded(.down)), reset: reset, retryAfter: retry)
    }

    func clear() { buckets.removeAll() }
}
