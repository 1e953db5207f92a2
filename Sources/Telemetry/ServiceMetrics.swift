import Foundation

/// The metrics of hubscript's long-running commands (`jobs serve`, `listen`, the
/// console), made on one registry; docs/operations.md lists them with their meaning.
/// Every label takes values from a short fixed list, or a job's name (from the
/// configuration), so the number of series stays small.
public struct ServiceMetrics: Sendable {
    public let registry: MetricsRegistry
    /// Runs that ended, by what started them and outcome.
    public let runs: Counter
    /// Runs that continued a journalled run (an interrupted fire, a redelivered event).
    public let resumedRuns: Counter
    public let runDuration: Histogram
    /// Writes by result: sent, replayed (from the journal, nothing sent), failed (among the sent).
    public let writes: Counter
    /// Reads a resumed run answered from its record instead of the Hub.
    public let replayedReads: Counter
    /// The Hub's `429` answers, by rate class.
    public let rateLimited: Counter
    /// Waits before a request, by reason (the client's own pacing, or the Hub's pause).
    public let rateWaits: Counter
    public let rateWaitSeconds: Counter
    /// Job fires by job and outcome.
    public let fires: Counter
    /// Webhook deliveries by result.
    public let deliveries: Counter

    /// Upper bounds of the run duration histogram, in seconds: from a tenth of a second
    /// (a recipe that reads a little) to an hour (a bulk export).
    public static let durationBuckets: [Double] = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600]

    /// How a run ended, from its exit code (docs/cli.md, "Exit codes").
    public static func outcome(exitCode: Int32) -> String {
        switch exitCode {
        case 0: "done"
        case 1: "failed"
        case 2: "usage"
        case 3: "permission"
        case 4: "limit"
        default: "other"
        }
    }

    public static let outcomes = ["done", "failed", "usage", "permission", "limit", "other"]
    /// Why a delivery was answered as it was (`DeliveryOutcome` of the trigger listener).
    public static let deliveryResults = ["accepted", "duplicate", "rejected_signature", "malformed", "ignored", "error"]
    /// `RateClass` raw values, and `caller` for a request only the caller's bucket counts.
    public static let rateClasses = ["caller", "grant", "user_creation", "refresh", "notification_send"]

    /// Registers the families on `registry`; `kinds` are the run kinds this process
    /// starts (`job`, `trigger`): their outcomes appear at 0 from the start.
    public init(registry: MetricsRegistry, kinds: [String] = []) {
        self.registry = registry
        runs = registry.counter("hubscript_runs_total", help: "Runs that ended, by what started them (job, trigger) and outcome (done, failed, usage, permission, limit, other: from the exit code).",
                                labels: ["kind", "outcome"])
        resumedRuns = registry.counter("hubscript_runs_resumed_total", help: "Runs that resumed a journalled run (an interrupted fire, a redelivered event whose run had not succeeded).",
                                       labels: ["kind"])
        runDuration = registry.histogram("hubscript_run_duration_seconds", help: "How long runs took, start to outcome, in seconds.",
                                         labels: ["kind"], buckets: Self.durationBuckets)
        writes = registry.counter("hubscript_writes_total", help: "Writes of runs that ended: sent to the Hub, replayed from the journal (nothing sent), failed (among the sent: refused or outcome unknown).",
                                  labels: ["result"])
        replayedReads = registry.counter("hubscript_reads_replayed_total", help: "Reads resumed runs answered from their record instead of the Hub.")
        rateLimited = registry.counter("hubscript_hub_rate_limited_total", help: "The Hub's 429 answers, by rate class (caller: the caller's bucket).",
                                       labels: ["class"])
        rateWaits = registry.counter("hubscript_hub_rate_waits_total", help: "Waits before a request for the rate limit, by reason (pacing: the client's own; hub: a pause the Hub asked for).",
                                     labels: ["reason"])
        rateWaitSeconds = registry.counter("hubscript_hub_rate_wait_seconds_total", help: "Seconds waited for the rate limit, by reason.",
                                           labels: ["reason"])
        fires = registry.counter("hubscript_fires_total", help: "Job fires by job and outcome: succeeded and failed were fired; skipped (overlap, or another scheduler fired it); missed (late, not caught up).",
                                 labels: ["job", "outcome"])
        deliveries = registry.counter("hubscript_deliveries_total", help: "Webhook deliveries by result: accepted (a new event), duplicate (an event already journalled), rejected_signature (401), malformed (400), ignored (no trigger listens), error (500).",
                                      labels: ["result"])
        for kind in kinds {
            for outcome in Self.outcomes { runs.initialize(kind, outcome) }
            resumedRuns.initialize(kind)
        }
        for result in ["sent", "replayed", "failed"] { writes.initialize(result) }
        for reason in ["pacing", "hub"] {
            rateWaits.initialize(reason)
            rateWaitSeconds.initialize(reason)
        }
        if kinds.contains("trigger") {
            for result in Self.deliveryResults { deliveries.initialize(result) }
        }
    }

    /// A run that ended: its outcome, its time, and whether it resumed a journalled run.
    public func recordRun(kind: String, exitCode: Int32, seconds: Double, resumed: Bool) {
        runs.increment(kind, Self.outcome(exitCode: exitCode))
        runDuration.observe(seconds, kind)
        if resumed { resumedRuns.increment(kind) }
    }

    /// What a run's writes and reads came to (plain numbers: this module knows no journal).
    public func recordCounts(sent: Int, replayed: Int, failed: Int, readsReplayed: Int) {
        if sent > 0 { writes.increment("sent", by: Double(sent)) }
        if replayed > 0 { writes.increment("replayed", by: Double(replayed)) }
        if failed > 0 { writes.increment("failed", by: Double(failed)) }
        if readsReplayed > 0 { replayedReads.increment(by: Double(readsReplayed)) }
    }

    /// One Hub answer: a 429 counts for its rate class (nil: the caller's bucket).
    public func recordAnswer(status: Int, rateClass: String?) {
        if status == 429 { rateLimited.increment(rateClass ?? "caller") }
    }

    /// One wait for the rate limit.
    public func recordWait(seconds: Double, pacing: Bool) {
        let reason = pacing ? "pacing" : "hub"
        rateWaits.increment(reason)
        if seconds > 0 { rateWaitSeconds.increment(reason, by: seconds) }
    }
}
