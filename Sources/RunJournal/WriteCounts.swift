/// The write tallies of one run.
public struct WriteCounts: Sendable, Equatable {
    /// Writes sent (whatever their outcome).
    public var writes = 0
    /// Writes answered from the journal.
    public var replayed = 0
    /// Writes recorded and not sent (plan mode).
    public var planned = 0
    /// Sent writes that failed or whose outcome is unknown (also counted in `writes`).
    public var failed = 0

    public init(writes: Int = 0, replayed: Int = 0, planned: Int = 0, failed: Int = 0) {
        self.writes = writes
        self.replayed = replayed
        self.planned = planned
        self.failed = failed
    }
}
