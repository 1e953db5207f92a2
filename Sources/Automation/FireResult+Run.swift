import Runs

extension FireResult {
    /// A fire that `error` stopped before or around its recipe: the code of
    /// `RunExitCode.of` and the error's words.
    public init(stoppedBy error: any Error) {
        self.init(exitCode: RunExitCode.of(error), message: "\(error)")
    }

    /// A fire whose recipe ran: its exit code, and the failure with its location.
    public init(_ outcome: HubRunOutcome) {
        self.init(exitCode: outcome.exitCode,
                  message: outcome.failure.map { failure in (failure.location.map { "\($0): " } ?? "") + failure.message })
    }
}
