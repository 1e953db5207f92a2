import Foundation

extension Journal {
    /// Closes the journal cleanly now, on the caller's thread, for a long-running
    /// process (`jobs serve`, `listen`) about to exit: commits a staged outcome, then —
    /// if this process may vouch for the file (`openChecked`) — checkpoints a long
    /// write-ahead log into the file and leaves the closed-clean marker
    /// (`markClosedCleanly`), so the next command opens it without an integrity check.
    ///
    /// Without it the marker is left by `deinit`, on whichever thread drops the last
    /// reference, which may be after the process has begun to exit: a checkpoint cut
    /// short by the exit leaves a long log and no marker. Call it once nothing else
    /// uses the journal; the connection stays open (a later use works, but writes no
    /// marker). Does nothing on PostgreSQL or `:memory:`. Idempotent.
    public func closeCleanly() {
        try? flush()
        guard vouchesAtClose else { return }
        vouchesAtClose = false
        markClosedCleanly()
    }
}
