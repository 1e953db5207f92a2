import Foundation
import Synchronization

/// A source of "now" for the sandbox: token expiry, cursor expiry, rate-limit refill,
/// seeded timestamps. Tests inject a `ManualClock`.
public protocol SandboxClock: Sendable {
    func now() -> Date
}

/// The wall clock.
public struct SystemClock: SandboxClock {
    public init() {}
    public func now() -> Date { Date() }
}

/// A clock that only moves when told to. Thread-safe.
public final class ManualClock: SandboxClock, Sendable {
    private let current: Mutex<Date>

    /// Starts at `start` (default 2026-01-15T12:00:00Z, a fixed instant).
    public init(start: Date = Date(timeIntervalSince1970: 1_768_478_400)) { current = Mutex(start) }

    public func now() -> Date { current.withLock { $0 } }

    /// Moves the clock forward by `seconds`.
    public func advance(by seconds: TimeInterval) { current.withLock { $0 += seconds } }

    /// Sets the clock to `date`.
    public func set(_ date: Date) { current.withLock { $0 = date } }
}

/// Configuration of a `HubSandbox`.
public struct SandboxOptions: Sendable {
    /// Where the sandbox keeps its state.
    public enum Storage: Sendable, Equatable {
        /// A private in-memory database, gone with the instance.
        case memory
        /// A SQLite file (WAL). The schema is created if missing and seeded if empty, so
        /// state persists across processes.
        case file(URL)
    }

    /// How much generated demo data to seed besides the fixed accounts.
    public struct Scale: Sendable, Equatable {
        /// Total users, fixed accounts included (at least 3).
        public var users: Int
        /// Generated audit events (besides the fixed history of the fixed accounts).
        public var auditEvents: Int
        public init(users: Int = 200, auditEvents: Int = 3_000) {
            self.users = users
            self.auditEvents = auditEvents
        }
        public static let standard = Scale()
    }

    /// Whether the token buckets of docs/hub-api.md are enforced.
    public enum RateLimits: Sendable, Equatable {
        /// 100/min per session or API key, 20/min on grants, 30/min on refresh,
        /// 60 notifications per recipient per application per hour.
        case standard
        /// No buckets: no 429s and no `RateLimit-*` headers.
        case off
    }

    public var storage: Storage
    public var seed: Int
    public var scale: Scale
    public var rateLimits: RateLimits
    public var faults: FaultSpec
    public var clock: any SandboxClock
    /// `nil` (default): paths sit at the root and `/v1/...` is 404. `"/v1"`: the prefix
    /// is also accepted (and stripped).
    public var apiPrefix: String?

    public init(
        storage: Storage = .memory,
        seed: Int = 1,
        scale: Scale = .standard,
        rateLimits: RateLimits = .standard,
        faults: FaultSpec = .none,
        clock: any SandboxClock = SystemClock(),
        apiPrefix: String? = nil
    ) {
        self.storage = storage
        self.seed = seed
        self.scale = scale
        self.rateLimits = rateLimits
        self.faults = faults
        self.clock = clock
        self.apiPrefix = apiPrefix
    }
}
