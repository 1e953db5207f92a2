import Foundation
import Synchronization

/// One progress bar as a reporter sees it.
public struct ProgressState: Sendable, Equatable {
    /// Distinct per bar within a run (1, 2, …).
    public let id: Int
    public let label: String
    /// Units of work expected; nil when unknown (no percentage or ETA then).
    public let total: Int64?
    /// Units done so far (may pass `total`).
    public var count: Int64
    /// Set once `done()` was called.
    public var isDone: Bool

    public init(id: Int, label: String, total: Int64?, count: Int64 = 0, isDone: Bool = false) {
        self.id = id
        self.label = label
        self.total = total
        self.count = count
        self.isDone = isDone
    }
}

/// Where `progress` bars go.
///
/// Implementation requirements: called on the Lua thread, once per `progress(…)`,
/// `advance` and `done`, so methods must return quickly (throttle drawing); they must
/// never write to stdout, which belongs to the recipe's `print` and `--json` events.
public protocol ProgressReporter: AnyObject, Sendable {
    func started(_ bar: ProgressState)
    func advanced(_ bar: ProgressState)
    func finished(_ bar: ProgressState)
}

/// Records every report, for tests.
public final class MemoryProgressReporter: ProgressReporter, Sendable {
    public enum Event: Sendable, Equatable {
        case started(ProgressState)
        case advanced(ProgressState)
        case finished(ProgressState)
    }

    private let recorded = Mutex<[Event]>([])

    public init() {}

    public var events: [Event] { recorded.withLock { $0 } }

    public func started(_ bar: ProgressState) { recorded.withLock { $0.append(.started(bar)) } }
    public func advanced(_ bar: ProgressState) { recorded.withLock { $0.append(.advanced(bar)) } }
    public func finished(_ bar: ProgressState) { recorded.withLock { $0.append(.finished(bar)) } }
}
