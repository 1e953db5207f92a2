import Foundation
import Configuration
import RunJournal

/// What the console shows and acts through, fixed when it starts (the configuration's
/// jobs and triggers as read then: restart the console to see a changed file).
public struct ConsoleContext: Sendable {
    public let journal: Journal
    public let locks: any RunLocks
    public let jobs: JobsConfig
    public let triggers: TriggersConfig
    /// nil: a read-only console (no sign-in, no actions).
    public let actions: (any ConsoleActions)?
    public let clock: @Sendable () -> Date
    /// How often the live view of a run reads the journal, in seconds.
    public var livePollInterval: Double = 0.25
    /// How long one live-view request waits for a change before it answers anyway, in seconds.
    public var liveWait: Double = 15
    /// The configuration's approval rules: a plan needs the larger of the approvals
    /// recorded with it and those these rules require now (as `apply` counts them).
    public var approvals: ApprovalsConfig = .none

    public init(journal: Journal, locks: any RunLocks, jobs: JobsConfig, triggers: TriggersConfig,
                actions: (any ConsoleActions)?, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.journal = journal
        self.locks = locks
        self.jobs = jobs
        self.triggers = triggers
        self.actions = actions
        self.clock = clock
    }

    /// What the console calls a run's state: its journalled status, or `interrupted`
    /// for a running run whose process is gone (its lock is free).
    func status(_ run: RunRecord) -> String { locks.effectiveStatus(run) }

    /// The approvals `plan` needs now: those recorded when it was made, or more when the
    /// rules in force ask more (a tightened rule covers plans already waiting).
    func requiredApprovals(_ plan: PlanRecord) -> Int {
        max(plan.required, approvals.required(recipeNames: ApprovalsConfig.recipeNames(path: plan.recipePath),
                                              profile: plan.profile, permissions: plan.permissions, writes: plan.writes))
    }
}
