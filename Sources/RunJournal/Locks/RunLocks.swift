import Foundation
import HubClient

/// A run id's lock, held until `release` (or until the holding process ends, however it
/// ends). Hand it to `HubRunRequest.heldLock` to run under it.
public protocol HeldRunLock: AnyObject, Sendable {
    var runID: String { get }
    /// Lets the lock go. Idempotent; also done when the object goes away.
    func release()
}

/// Where run ids are locked, so one process at a time runs a run id. A journal says
/// which (`Journal.runLocks(state:)`): `FileRunLocks` (`flock` in the state directory,
/// one host) for SQLite, `PostgresRunLocks` (the server's advisory locks, every host
/// sharing the database) for PostgreSQL.
///
/// Contracts (both):
/// - `acquire` never waits for another run: a held lock is refused at once with
///   `RunLock.Busy` (exit code 2 in the CLI).
/// - A lock is dropped when its holder ends in any way (`kill -9` included), so a run
///   can never be left locked by a dead process.
/// - `isHeld` is a probe that takes nothing; it answers false when it cannot tell.
public protocol RunLocks: Sendable {
    func acquire(_ runID: String) throws -> any HeldRunLock
    func isHeld(_ runID: String) -> Bool
}

extension RunLocks {
    /// The status to show for a journal row: `interrupted` for a `running` row whose
    /// lock no process holds, the row's own status otherwise.
    public func effectiveStatus(_ run: RunRecord) -> String {
        if run.status == .running && !isHeld(run.id) { return "interrupted" }
        return run.status.rawValue
    }
}

/// The run locks of a SQLite journal: `RunLock`'s `flock`s in the state directory.
public struct FileRunLocks: RunLocks {
    public let state: StateDirectory

    public init(state: StateDirectory) { self.state = state }

    public func acquire(_ runID: String) throws -> any HeldRunLock { try RunLock.acquire(runID, state: state) }
    public func isHeld(_ runID: String) -> Bool { RunLock.isHeld(runID, state: state) }
}
