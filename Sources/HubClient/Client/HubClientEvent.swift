import Foundation
import SystemText

/// What the client did, for `--verbose` and for the rate-limit notices: every answer
/// with its status and time, every retry, and every wait for the rate limit (a paced
/// request or a server pause). Delivered on the calling thread, before a wait starts.
public enum HubClientEvent: Sendable, Equatable {
    /// Why a request waits before it is sent.
    public enum WaitReason: Sendable, Equatable {
        /// The client paces itself under the per-minute limit.
        case pacing
        /// The Hub said to wait (a `429` with `Retry-After`, or no tokens left).
        case hub
    }

    /// One attempt answered (`status`) after `seconds`.
    case answered(method: String, path: String, status: Int, seconds: Double)
    /// One attempt failed in transport after `seconds`.
    case transportFailed(method: String, path: String, message: String, seconds: Double)
    /// The request is sent again after `wait` seconds: attempt `attempt` of `maxAttempts`.
    case retrying(method: String, path: String, attempt: Int, maxAttempts: Int, wait: Double, reason: String)
    /// The next request waits `seconds` for the rate limit.
    case rateLimitWait(seconds: Double, reason: WaitReason)

    /// One line for people, e.g. `hub: GET /users → 200 (12 ms)` or
    /// `rate limited by the Hub, waiting 3 s`.
    public var text: String {
        switch self {
        case .answered(let method, let path, let status, let seconds):
            return "hub: \(method) \(path) → \(status) (\(Self.milliseconds(seconds)))"
        case .transportFailed(let method, let path, let message, let seconds):
            return "hub: \(method) \(path) failed: \(message) (\(Self.milliseconds(seconds)))"
        case .retrying(let method, let path, let attempt, let maxAttempts, let wait, let reason):
            return "hub: retrying \(method) \(path) in \(Self.seconds(wait)) (attempt \(attempt) of \(maxAttempts)): \(reason)"
        case .rateLimitWait(let seconds, .hub):
            return "rate limited by the Hub, waiting \(Self.seconds(seconds))"
        case .rateLimitWait(let seconds, .pacing):
            return "pacing requests under the rate limit, waiting \(Self.seconds(seconds))"
        }
    }

    /// True for the waits people always see (unless `--quiet`): any wait the Hub asked
    /// for, and pacing pauses of a second or more.
    public var isNotableWait: Bool {
        switch self {
        case .rateLimitWait(_, .hub): return true
        case .rateLimitWait(let seconds, .pacing): return seconds >= 1
        default: return false
        }
    }

    static func milliseconds(_ seconds: Double) -> String { "\(Int((seconds * 1000).rounded())) ms" }

    /// `3 s`, `0.6 s`: whole seconds from 10 s, one decimal below.
    static func seconds(_ seconds: Double) -> String {
        if seconds >= 10 || seconds == seconds.rounded() { return "\(Int(seconds.rounded(.up))) s" }
        return DecimalText.fixed(seconds, 1) + " s"
    }
}
