import Foundation
import Telemetry

/// The journal's part of a serving process's `/readyz` and `/metrics`: a readiness
/// check that the journal answers within `deadline`, and the scrape-time gauges of its
/// size and oldest run (and of the run folder, when given).
///
/// Use a `Journal` of its own (its own connection): a probe then never waits behind a
/// run's journal calls, and a journal that hangs holds only this one. At most one probe
/// query runs at a time (`DeadlineProbe`); a scrape reads the gauges only after the
/// probe answered, so it never hangs on a journal that does.
public final class JournalHealth: Sendable {
    /// How long `/readyz` waits for the journal by default.
    public static let defaultDeadline: TimeInterval = 2

    private let journal: Journal
    private let probe: DeadlineProbe
    private let runFolder: FolderSize?

    public init(journal: Journal, runFolder: URL?, deadline: TimeInterval = JournalHealth.defaultDeadline) {
        self.journal = journal
        self.probe = DeadlineProbe("the journal", deadline: deadline) { try journal.checkReachable() }
        self.runFolder = runFolder.map { FolderSize(folder: $0) }
    }

    /// nil when the journal answered in time; otherwise why not, in one line.
    public func notReadyReason() -> String? {
        probe.probe()
    }

    /// The readiness check (`/readyz`) named `journal`.
    public var readinessCheck: ReadinessCheck {
        ReadinessCheck("journal") { [self] in notReadyReason() }
    }

    /// Adds the journal's and run folder's gauges to `registry`'s scrapes.
    public func install(on registry: MetricsRegistry) {
        struct Unreachable: Error {}
        StorageGauges(journal: { [self] in
            guard probe.probe() == nil else { throw Unreachable() }
            return StorageGauges.JournalFigures(bytes: try journal.storageBytes(), oldestRunStart: try journal.oldestRunStart())
        }, runFolder: runFolder).install(on: registry)
    }
}
