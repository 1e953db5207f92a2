import RecipeModules

/// The exit code of a recipe run that an error stopped outside the recipe (its setup,
/// the capability gate, the allow list, a plan's check); the recipe's own failures carry
/// theirs (`ScriptFailure.exitCode`). One table for `hubscript run`, `plan`, `apply`,
/// and the fires of jobs and triggers, so each reports a failure with the same code.
public enum RunExitCode {
    /// The configuration, the recipe or its arguments are wrong; or anything unforeseen.
    public static let usage: Int32 = 2
    /// The profile's credentials, or the job's or trigger's allow list, lack a permission.
    public static let capabilityDenied: Int32 = 3
    /// A limit stopped the run (a plan refused as stale or too large, a deadline).
    public static let limit: Int32 = 4
    /// The Hub could not be reached (a refused connection, a host name that does not
    /// resolve, a TLS certificate not trusted, no answer in time): nothing is wrong with
    /// the recipe; fix the way to the Hub, then run (or resume) again. `HubReachFailure`.
    public static let hubUnreachable: Int32 = 7

    /// The code for `error`.
    public static func of(_ error: any Error) -> Int32 {
        switch error {
        case is HubGate.Denied, is NotAllowed: capabilityDenied
        case is PlanRefusal: limit
        case let reach as HubReachFailure: reach.exitCode
        default: usage
        }
    }
}
