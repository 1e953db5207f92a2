import Foundation

/// How a run was started.
public enum RunMode: String, Sendable, CaseIterable {
    /// `hubscript RECIPE`: reads and writes live.
    case run
    /// `hubscript plan`: reads live, writes recorded and not sent.
    case plan
    /// `hubscript apply PLAN`: writes sent only as the plan lists them.
    case apply
}

/// Where a run stands. `stopped` means a limit stopped it (exit code 4).
public enum RunStatus: String, Sendable, CaseIterable {
    case running, succeeded, failed, stopped
}

/// Where one write stands. `pending` is recorded (and committed) before the request
/// is sent; after a crash it means "maybe sent": resending with the same key is safe.
public enum WriteState: String, Sendable, CaseIterable {
    case pending, done, failed
}

/// The tallies of a run, as the summary prints them.
public struct RunCounts: Sendable, Equatable {
    public var reads: Int
    /// Writes sent (whatever their outcome was).
    public var writes: Int
    /// Writes answered from the journal without touching the network.
    public var replayed: Int
    /// Writes recorded in a plan and not sent.
    public var planned: Int
    /// Writes that failed or whose outcome is unknown.
    public var failed: Int
    /// Reads answered from the run's record instead of the Hub (a resume's; not in
    /// `reads`, and not kept in the journal's run totals).
    public var readsReplayed = 0

    public init(reads: Int = 0, writes: Int = 0, replayed: Int = 0, planned: Int = 0, failed: Int = 0) {
        self.reads = reads
        self.writes = writes
        self.replayed = replayed
        self.planned = planned
        self.failed = failed
    }

    /// The run's counts from its reads and its coordinator's write counts.
    public init(reads: Int, writes: WriteCounts) {
        self.init(reads: reads, writes: writes.writes, replayed: writes.replayed,
                  planned: writes.planned, failed: writes.failed)
    }

    /// The tallies of two passes of a run together.
    public static func + (a: RunCounts, b: RunCounts) -> RunCounts {
        var sum = RunCounts(reads: a.reads + b.reads, writes: a.writes + b.writes, replayed: a.replayed + b.replayed,
                            planned: a.planned + b.planned, failed: a.failed + b.failed)
        sum.readsReplayed = a.readsReplayed + b.readsReplayed
        return sum
    }
}

/// What `Journal.startRun` needs to record a run.
public struct RunStart: Sendable {
    public var id: String
    public var recipePath: String
    public var recipeSHA256: String
    /// The validated params (an object) as canonical JSON text (sorted keys).
    public var paramsJSON: String
    public var profile: String
    public var mode: RunMode
    public var outputFolder: String?
    /// `--max-writes` of the run (nil: none); a resume that passes none keeps it.
    public var maxWrites: Int?
    /// `--timeout` in seconds (nil: the manifest's); a resume that passes none keeps it.
    public var timeoutSeconds: Double?

    public init(id: String, recipePath: String, recipeSHA256: String, paramsJSON: String,
                profile: String, mode: RunMode, outputFolder: String? = nil,
                maxWrites: Int? = nil, timeoutSeconds: Double? = nil) {
        self.maxWrites = maxWrites
        self.timeoutSeconds = timeoutSeconds
        self.id = id
        self.recipePath = recipePath
        self.recipeSHA256 = recipeSHA256
        self.paramsJSON = paramsJSON
        self.profile = profile
        self.mode = mode
        self.outputFolder = outputFolder
    }
}

/// One row of the `runs` table.
public struct RunRecord: Sendable, Equatable {
    public var id: String
    public var recipePath: String
    public var recipeSHA256: String
    /// The params as canonical JSON text (sorted keys).
    public var paramsJSON: String
    public var profile: String
    public var mode: RunMode
    public var status: RunStatus
    public var startedAt: Date
    public var finishedAt: Date?
    public var counts: RunCounts
    public var outputFolder: String?
    /// How many times the run was started (1, plus one per resume).
    public var attempts: Int
    /// `--max-writes` as journalled (nil: none).
    public var maxWrites: Int? = nil
    /// `--timeout` in seconds as journalled (nil: the manifest's).
    public var timeoutSeconds: Double? = nil
    /// The exit code the run's last pass ended with (nil while it runs, when that pass
    /// died, or for a run recorded before journal schema 4).
    public var exitCode: Int? = nil
}

/// One row of the `writes` table.
public struct WriteRecord: Sendable, Equatable {
    public var runID: String
    /// The write's position in the run (1-based), as the coordinator numbered it.
    public var sequence: Int
    public var key: String
    public var method: String
    public var path: String
    /// SHA-256 of the canonical JSON body; nil for a write without a body.
    public var bodySHA256: String?
    public var state: WriteState
    public var httpStatus: Int?
    /// The response as canonical JSON text (`done`); nil when the response had no body.
    public var responseJSON: String?
    /// Why the write failed (`failed`).
    public var error: String?
    /// How many times `recordPending` was called for this key (sends attempted).
    public var attempts: Int
    public var createdAt: Date
    public var updatedAt: Date
}
