import Foundation
import HubClient
import RunJournal
import Scheduler
import Telemetry
import XCTest
@testable import Automation

/// What the Hub client, the scheduler and the listener report, as `/metrics` counts it.
final class ServiceMetricsMappingTests: XCTestCase {
    func testHub429sCountByRateClassAndWaitsByReason() {
        let metrics = ServiceMetrics(registry: MetricsRegistry())
        let observe = metrics.hubObserver
        observe(.answered(method: "POST", path: "/users", status: 429, seconds: 0.01))
        observe(.answered(method: "POST", path: "/organizations/org_1/entitlements", status: 429, seconds: 0.01))
        observe(.answered(method: "POST", path: "/users/usr_1/entitlements", status: 429, seconds: 0.01))
        observe(.answered(method: "POST", path: "/applications/app_1/notifications", status: 429, seconds: 0.01))
        observe(.answered(method: "POST", path: "/auth/token/refresh", status: 429, seconds: 0.01))
        observe(.answered(method: "GET", path: "/users?status=active", status: 429, seconds: 0.01))
        observe(.answered(method: "GET", path: "/users", status: 200, seconds: 0.01))
        observe(.answered(method: "POST", path: "/users", status: 503, seconds: 0.01))
        observe(.rateLimitWait(seconds: 1.5, reason: .pacing))
        observe(.rateLimitWait(seconds: 0.25, reason: .pacing))
        observe(.rateLimitWait(seconds: 3, reason: .hub))
        observe(.retrying(method: "POST", path: "/users", attempt: 2, maxAttempts: 5, wait: 3, reason: "429 rate_limited"))
        XCTAssertEqual(ServiceMetrics.rateClasses.map { metrics.rateLimited.value($0) }, [1, 2, 1, 1, 1],
                       "caller, grant, user_creation, refresh, notification_send")
        XCTAssertEqual(metrics.rateWaits.value("pacing"), 2)
        XCTAssertEqual(metrics.rateWaits.value("hub"), 1)
        XCTAssertEqual(metrics.rateWaitSeconds.value("pacing"), 1.75)
        XCTAssertEqual(metrics.rateWaitSeconds.value("hub"), 3)
    }

    func testFiresCountTheirFinalOutcomeAndEachMissedTime() throws {
        let metrics = ServiceMetrics(registry: MetricsRegistry())
        let everyMinute = try CronSchedule("* * * * *")
        let t0 = Date(timeIntervalSince1970: 1_767_261_600)   // 2026-01-01T10:00:00Z
        for status in FireStatus.allCases {
            metrics.recordFire(job: "tick", status: status, scheduledAt: t0, missedThrough: nil, schedule: everyMinute)
        }
        // A missed range 10:00 through 10:09: ten scheduled times.
        metrics.recordFire(job: "tick", status: .missed, scheduledAt: t0, missedThrough: t0.addingTimeInterval(540),
                           schedule: everyMinute)
        // A range of a job no longer configured counts once.
        metrics.recordFire(job: "gone", status: .missed, scheduledAt: t0, missedThrough: t0.addingTimeInterval(540), schedule: nil)
        XCTAssertEqual(["succeeded", "failed", "skipped", "missed", "queued", "fired"].map { metrics.fires.value("tick", $0) },
                       [1, 1, 1, 11, 0, 0])
        XCTAssertEqual(metrics.fires.value("gone", "missed"), 1)
        // A huge range stops counting at 10,000.
        metrics.recordFire(job: "big", status: .missed, scheduledAt: t0, missedThrough: t0.addingTimeInterval(86_400 * 30),
                           schedule: everyMinute)
        XCTAssertEqual(metrics.fires.value("big", "missed"), 10_000)
    }

    func testDeliveriesAndRunCounts() {
        let metrics = ServiceMetrics(registry: MetricsRegistry(), kinds: ["trigger"])
        for outcome in DeliveryOutcome.allCases { metrics.recordDelivery(outcome) }
        metrics.recordDelivery(.duplicate)
        XCTAssertEqual(ServiceMetrics.deliveryResults, DeliveryOutcome.allCases.map(\.rawValue))
        XCTAssertEqual(ServiceMetrics.deliveryResults.map { metrics.deliveries.value($0) }, [1, 2, 1, 1, 1, 1])
        var counts = RunCounts(reads: 7, writes: 5, replayed: 3, planned: 2, failed: 1)
        counts.readsReplayed = 4
        metrics.recordCounts(counts)
        XCTAssertEqual(["sent", "replayed", "failed"].map { metrics.writes.value($0) }, [5, 3, 1])
        XCTAssertEqual(metrics.replayedReads.value(), 4)
    }
}
