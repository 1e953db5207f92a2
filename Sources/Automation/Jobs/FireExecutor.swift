import Foundation
import RunJournal
import Configuration

/// One fire to run: the job, its run id and the run's lock, which the scheduler took
/// to claim the fire and keeps until the fire is recorded (hand it to
/// `HubRunRequest.heldLock`).
public struct FireLaunch: Sendable {
    public let job: ConfiguredJob
    public let runID: String
    public let lock: any HeldRunLock
    /// The fire's earlier run was interrupted (its process died): the journal resumes it.
    public let resuming: Bool
    /// The fire's row in the journal (`Journal.updateFire`), for an executor that must
    /// record an outcome itself before the process ends.
    public let row: Int64
}

/// How a fire's run ended.
public struct FireResult: Sendable, Equatable {
    /// The process exit code a `hubscript run` of the recipe would have had (0: success).
    public var exitCode: Int32
    /// Why it failed (nil when it succeeded).
    public var message: String?

    public init(exitCode: Int32, message: String? = nil) {
        self.exitCode = exitCode
        self.message = message
    }

    public static let succeeded = FireResult(exitCode: 0)
}

/// Runs a fire's recipe (the CLI runs it against the job's profile through
/// `HubRecipeRun`; tests use a double). Called on a thread of the scheduler's; fires of
/// different jobs may run at once.
public protocol FireExecutor: Sendable {
    func execute(_ fire: FireLaunch) -> FireResult
}

/// A failed fire of a job with `on_failure = { dispatch = TARGET }`.
public struct JobFailure: Sendable, Equatable {
    public let job: String
    public let runID: String
    public let exitCode: Int32
    public let message: String
    /// The Dispatch target named by `on_failure.dispatch`.
    public let dispatch: String

    public init(job: String, runID: String, exitCode: Int32, message: String, dispatch: String) {
        self.job = job
        self.runID = runID
        self.exitCode = exitCode
        self.message = message
        self.dispatch = dispatch
    }
}

/// The seam for `on_failure`: told of each failed fire of a job that names a Dispatch
/// target. Returns what it did, in words for the fire's record (`jobs history`); a
/// thrown error is recorded as the notification's failure and does not change the
/// fire's outcome.
public protocol JobFailureNotifier: Sendable {
    func notify(_ failure: JobFailure) throws -> String
}

/// The notifier when none is given (library use, tests): nothing is sent, and the
/// fire's record says so. The CLI passes one that sends through the named profile's
/// Dispatch (`DispatchFailureNotifier`).
public struct UnsentFailureNotifier: JobFailureNotifier {
    public init() {}

    public func notify(_ failure: JobFailure) throws -> String {
        "dispatch \"\(failure.dispatch)\" not notified: no failure notifier is configured"
    }
}
