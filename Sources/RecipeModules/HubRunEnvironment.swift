import ScriptHost
import Secrets

/// What extra plugins of a run may use.
public struct HubRunEnvironment: Sendable {
    public let runID: String
    public let prepared: PreparedRecipe
    public let output: any ScriptOutput
    /// The run's writes (journal, keys, plan and apply, limits) and its `--json` write events.
    public let context: HubRunContext
    /// See `HubRunRequest.secrets`.
    public let secrets: (any SecretResolver)?

    package init(runID: String, prepared: PreparedRecipe, output: any ScriptOutput, context: HubRunContext,
                 secrets: (any SecretResolver)?) {
        self.runID = runID
        self.prepared = prepared
        self.output = output
        self.context = context
        self.secrets = secrets
    }
}
