import Foundation

/// A run's status as a prune selects it: the journal's statuses, with a `running` row
/// whose lock no process holds shown as `interrupted` (`RunLocks.effectiveStatus`).
public enum PruneStatus: String, Sendable, CaseIterable {
    case succeeded, failed, stopped, interrupted

    /// Whether a run with this status can still be resumed (`runs resume` runs every
    /// run that did not succeed).
    public var isUnfinished: Bool { self != .succeeded }
}

/// Which runs a prune removes (`Journal.prune`). Every condition given must hold.
public struct PruneRule: Sendable, Equatable {
    /// Only runs started, and finished (or last active), before this moment.
    public var before: Date
    /// Only runs with one of these statuses (nil: any).
    public var statuses: Set<PruneStatus>?
    /// Only runs of this recipe file (its absolute path, as journalled).
    public var recipePath: String?
    /// Only runs fired by this job (`jobs`), and this job's fire records.
    public var job: String?
    /// A run that did not succeed can still be resumed, so it is kept unless it started
    /// before this moment too (`retention.keep_failed`); nil keeps every such run.
    public var unfinishedBefore: Date?

    public init(before: Date, statuses: Set<PruneStatus>? = nil, recipePath: String? = nil, job: String? = nil,
                unfinishedBefore: Date? = nil) {
        self.before = before
        self.statuses = statuses
        self.recipePath = recipePath
        self.job = job
        self.unfinishedBefore = unfinishedBefore
    }
}

/// Why a run the rule selects stays in the journal.
public enum KeptReason: String, Sendable, CaseIterable, Comparable {
    /// A process holds its lock: it runs now.
    case running
    /// It did not succeed and is younger than `PruneRule.unfinishedBefore`: `runs resume` can still finish it.
    case resumable
    /// A plan (`hubscript plan`) not applied yet: an apply, or an approval, may still refer to it.
    case plan
    /// A rule added through `RetentionKeep.also` (approvals, for instance) keeps it.
    case referenced

    public static func < (a: KeptReason, b: KeptReason) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

/// The one decision of what a prune never removes, whatever the rule selects.
///
/// Contracts: a run is kept when a process holds its lock (it runs), when it did not
/// succeed and is younger than `unfinishedBefore` (it can still be resumed), when it
/// is a plan not yet applied (`mode = plan`: an apply of a plan records it as
/// `mode = apply`), or when any of `also` names a reason. A later feature that refers
/// to runs (approvals of plans) adds its rule to `also` rather than editing the others.
public struct RetentionKeep: Sendable {
    public let locks: any RunLocks
    public let unfinishedBefore: Date?
    /// More rules; each returns a reason to keep the run, or nil.
    public var also: [@Sendable (RunRecord) throws -> KeptReason?]

    public init(locks: any RunLocks, unfinishedBefore: Date?, also: [@Sendable (RunRecord) throws -> KeptReason?] = []) {
        self.locks = locks
        self.unfinishedBefore = unfinishedBefore
        self.also = also
    }

    /// Why `run` must stay (nil: it may go). `status` is its effective status.
    public func reasonToKeep(_ run: RunRecord, status: PruneStatus) throws -> KeptReason? {
        if run.status == .running && status != .interrupted { return .running }
        if run.mode == .plan { return .plan }
        if status.isUnfinished {
            guard let unfinishedBefore, run.startedAt < unfinishedBefore,
                  (run.finishedAt ?? run.startedAt) < unfinishedBefore else { return .resumable }
        }
        for rule in also { if let reason = try rule(run) { return reason } }
        return nil
    }
}

/// What a prune removed (or, for a dry run, would remove), and what it kept.
public struct PruneReport: Sendable, Equatable {
    public var runs = 0
    public var writes = 0
    public var reads = 0
    public var fires = 0
    public var triggerEvents = 0
    /// Export folders (`runs/<id>/` in the state directory) removed, and their bytes.
    public var exportFolders = 0
    public var exportBytes: Int64 = 0
    /// The journal file's bytes given back to the file system (SQLite with incremental
    /// vacuum; 0 on PostgreSQL, whose autovacuum makes the space reusable instead).
    public var journalBytesFreed: Int64 = 0
    /// Runs the rule selected but the journal keeps, by reason.
    public var kept: [KeptReason: Int] = [:]
    /// Runs a prune killed mid-way had begun to delete, finished by this one.
    public var finishedFromEarlier = 0

    public init() {}
}
