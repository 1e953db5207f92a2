import Foundation
import SystemText

/// The client's source of time. Injected so tests of backoff, pacing and token expiry
/// run instantly and deterministically.
public protocol HubClock: Sendable {
    /// Seconds on a clock that never goes backwards (any epoch).
    func now() -> TimeInterval
    /// Blocks the calling thread for `seconds` (a fake clock advances instead).
    func sleep(_ seconds: TimeInterval)
}

/// Real time: a monotonic clock and `Thread.sleep`.
public struct SystemHubClock: HubClock {
    public init() {}
    public func now() -> TimeInterval { MonotonicTime.seconds() }
    public func sleep(_ seconds: TimeInterval) {
        if seconds > 0 { Thread.sleep(forTimeInterval: seconds) }
    }
}

/// A source of uniform random numbers in [0, 1), used for backoff jitter.
public protocol HubRandomSource: Sendable {
    func nextUnit() -> Double
}

/// The system random generator.
public struct SystemRandomSource: HubRandomSource {
    public init() {}
    public func nextUnit() -> Double { Double.random(in: 0..<1) }
}
