import Foundation

/// Runs a check that may hang (a query to a database across the network) with a
/// deadline, for `/readyz`: the check runs on a thread of its own; the caller waits at
/// most `deadline` and hears "did not answer within …" if it has not ended.
///
/// Contracts:
/// - At most one check runs at a time: while one is still running (past its deadline,
///   stuck in the network), later calls do not start another; they wait for it within
///   their own deadline, and report it unanswered otherwise. So probes every second
///   against a hung database do not pile up threads.
/// - The check's thrown error becomes the reason (`describe` words it).
public final class DeadlineProbe: @unchecked Sendable {
    private let condition = NSCondition()
    private var running = false
    /// Bumped each time a check ends; its result is `lastResult`.
    private var generation = 0
    private var lastResult: String?
    private let check: @Sendable () throws -> Void
    private let what: String
    public let deadline: TimeInterval

    /// - Parameters:
    ///   - what: what is checked, for the reasons (`the journal`).
    ///   - deadline: how long a caller waits, in seconds.
    public init(_ what: String, deadline: TimeInterval, check: @escaping @Sendable () throws -> Void) {
        self.what = what
        self.deadline = deadline
        self.check = check
    }

    /// nil when the check passed within the deadline; otherwise why not.
    public func probe() -> String? {
        condition.lock()
        defer { condition.unlock() }
        let start = generation
        if !running {
            running = true
            let thread = Thread { [self] in
                var reason: String?
                do { try check() } catch { reason = "\(what) is not reachable: \(error)" }
                condition.lock()
                lastResult = reason
                generation += 1
                running = false
                condition.broadcast()
                condition.unlock()
            }
            thread.name = "hubscript.probe"
            thread.start()
        }
        let until = Date().addingTimeInterval(deadline)
        while generation == start {
            if !condition.wait(until: until) && generation == start {
                return "\(what) did not answer within \(PrometheusText.number(deadline)) s"
            }
        }
        return lastResult
    }
}
