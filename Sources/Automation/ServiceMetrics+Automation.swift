import Foundation
import HubClient
import RunJournal
import Scheduler
import Configuration
import Telemetry

/// How what the scheduler, the listener and the Hub client report becomes `/metrics`
/// (the families of `ServiceMetrics`; docs/operations.md, "Health and metrics").
extension ServiceMetrics {
    /// Hears the Hub client's answers (a `429` counts for its rate class, `caller` when
    /// the request has none) and its waits for the rate limit (by reason). Pass it as a
    /// connection's `observe`.
    public var hubObserver: @Sendable (HubClientEvent) -> Void {
        let metrics = self
        return { event in
            switch event {
            case .answered(let method, let path, let status, _):
                metrics.recordAnswer(status: status, rateClass: RateClass.of(method: method, path: path)?.rawValue)
            case .rateLimitWait(let seconds, let reason):
                metrics.recordWait(seconds: seconds, pacing: reason == .pacing)
            default:
                break
            }
        }
    }

    /// What an ended run's writes and reads came to.
    public func recordCounts(_ counts: RunCounts) {
        recordCounts(sent: counts.writes, replayed: counts.replayed, failed: counts.failed, readsReplayed: counts.readsReplayed)
    }

    /// Counts a fire's final record (`JobScheduler.onRecord`): succeeded, failed or
    /// skipped once; a missed range once per scheduled time in it (of the job's schedule
    /// in `jobs`; at most 10,000). Records that are not final (queued, fired) count nothing.
    public func recordFire(_ record: FireRecord, jobs: JobsConfig) {
        let schedule = jobs.jobs.first { $0.name == record.job }?.definition.schedule
        recordFire(job: record.job, status: record.status, scheduledAt: record.scheduledAt,
                   missedThrough: record.missedThrough, schedule: schedule)
    }

    /// `recordFire(_:jobs:)` from the record's parts.
    public func recordFire(job: String, status: FireStatus, scheduledAt: Date, missedThrough: Date?, schedule: CronSchedule?) {
        switch status {
        case .succeeded, .failed, .skipped:
            fires.increment(job, status.rawValue)
        case .missed:
            var count = 1
            if let through = missedThrough, through > scheduledAt, let schedule {
                count = max(1, schedule.fires(in: scheduledAt...through).prefix(10_000).reduce(0) { n, _ in n + 1 })
            }
            fires.increment(job, "missed", by: Double(count))
        case .queued, .fired:
            break
        }
    }

    /// Counts one delivery of the webhook receiver.
    public func recordDelivery(_ outcome: DeliveryOutcome) {
        deliveries.increment(outcome.rawValue)
    }
}
