/// What happens to fires that came due while nothing ran them (the host was down, or no
/// `jobs run-due` came): see `FirePlanner` for the exact rule.
public enum CatchUpPolicy: Hashable, Sendable, CustomStringConvertible {
    /// Late fires are recorded as missed; only on-time fires run.
    case none
    /// If no fire is on time, the latest late fire runs; the older ones are missed.
    case latest
    /// Up to `max` of the most recent late fires run, oldest first; older ones are
    /// missed. `max` below 1 behaves as `none`.
    case all(max: Int)

    public var description: String {
        switch self {
        case .none: "none"
        case .latest: "latest"
        case .all(let max): "all (at most \(max))"
        }
    }
}

/// What happens when a job's fire comes due while its previous run has not finished.
/// Only the policy is defined here; the runner applies it.
public enum OverlapPolicy: String, Hashable, Sendable, CaseIterable {
    /// The new fire does not run; it is recorded as skipped (so it is never caught up).
    case skip
    /// The new fire waits for the running one and then runs; one run of a job at a time,
    /// in scheduled order.
    case queue
}
