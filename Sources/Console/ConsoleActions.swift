import Foundation
import HubClient

/// What the console can change, provided by the program that serves it (the CLI
/// composes runs and Hub connections; this module only reads the journal).
public protocol ConsoleActions: Sendable {
    /// A new client of the console's Hub with a session credential kept in memory, for
    /// one person to sign in with (`HubAuth.login`).
    func signInClient() throws -> HubClient

    /// The platform permissions firing `job` needs (its recipe's `needs`).
    func permissionsToFire(job: String) throws -> [String]

    /// Fires `job` now, by hand (as `hubscript jobs run` does): claims the fire and runs
    /// it in the background. Returns at once with what became of the claim.
    func fireNow(job: String, by person: String) throws -> FireNowResult
}

/// What a "fire now" did.
public enum FireNowResult: Sendable, Equatable {
    /// Claimed; its run has this id and runs in the background.
    case started(runID: String)
    /// Not run (the job's overlap policy, or another scheduler holds it), and why.
    case skipped(runID: String, reason: String)
}
