import Foundation
@testable import HubBindings
import HubClient
import Scheduler
import XCTest
import TestSupport

/// Schedulers on several hosts (each with a state directory of its own) sharing one
/// PostgreSQL journal: its run locks and its single-writer transactions make each fire
/// run once, whoever fires it.
final class SharedJournalSchedulerTests: XCTestCase {
    func fixture(now: String) throws -> JobsFixture {
        try JobsFixture(now: now, journal: .postgres(TestPostgres.freshSchema(TestPostgres.requiredBaseURL())))
    }

    func testTwoHostsSharingOnePostgresJournalRunEachFireOnce() throws {
        let fixture = try fixture(now: "2026-01-01T10:00:05Z")
        let jobs = [try fixture.job("a", "* * * * *"), try fixture.job("b", "* * * * *", catchUp: .all(max: 3))]
        let first = try fixture.scheduler(jobs, host: "a"), second = try fixture.scheduler(jobs, host: "b")
        XCTAssertEqual(fixture.runDueTogether(first, second), [])
        XCTAssertEqual(fixture.executor.runs.sorted(),
                       (0..<4).flatMap { ["a@2026-01-01T10:0\($0):00Z", "b@2026-01-01T10:0\($0):00Z"] }.sorted())
        let history = try fixture.history()
        XCTAssertEqual(history.filter { $0.contains(" succeeded") }.count, 8, "\(history)")
        for skip in history.filter({ $0.contains(" skipped") }) {
            XCTAssertTrue(skip.contains(" skipped: already fired ("), skip)
        }
    }

    func testAFireAnotherHostHoldsOrRanIsRecordedAlreadyFired() throws {
        let fixture = try fixture(now: "2026-01-01T10:00:05Z")
        let jobs = [try fixture.job("a", "* * * * *")]
        let first = try fixture.scheduler(jobs, host: "a"), second = try fixture.scheduler(jobs, host: "b"),
            third = try fixture.scheduler(jobs, host: "c")
        let secondDue = try second.plan(now: fixture.clock.now), thirdDue = try third.plan(now: fixture.clock.now)
        fixture.executor.hold("a@2026-01-01T10:00:00Z")
        let done = DispatchGroup()
        done.enter()
        Thread.detachNewThread { try? first.runDue(now: at("2026-01-01T10:00:05Z")); done.leave() }
        XCTAssertTrue(fixture.executor.waitUntilRunning("a@2026-01-01T10:00:00Z"))
        XCTAssertNil(try second.fire(secondDue[0]))
        fixture.executor.release("a@2026-01-01T10:00:00Z")
        done.wait()
        XCTAssertNil(try third.fire(thirdDue[0]))
        XCTAssertEqual(fixture.executor.runs, ["a@2026-01-01T10:00:00Z"])
        let host = ProcessInfo.processInfo.hostName.prefix(30)
        XCTAssertEqual(try fixture.history(), [
            "a@2026-01-01T10:00:00Z succeeded",
            "a@2026-01-01T10:00:00Z skipped: already fired (running in process \(getpid()) on \(host))",
            "a@2026-01-01T10:00:00Z skipped: already fired (succeeded)",
        ])
    }

    func testAFireInterruptedOnOneHostIsResumedByAnother() throws {
        let fixture = try fixture(now: "2026-01-01T10:00:05Z")
        let row = try fixture.journal.recordFire(NewFire(job: "r", scheduledAt: at("2026-01-01T10:00:00Z"),
                                                         runID: "r@2026-01-01T10:00:00Z", status: .fired))
        let scheduler = try fixture.scheduler([try fixture.job("r", "* * * * *")], host: "b")
        try scheduler.runDue(now: at("2026-01-01T10:01:05Z"))
        XCTAssertEqual(fixture.executor.resumes, ["r@2026-01-01T10:00:00Z"])
        XCTAssertEqual(try fixture.history(), [
            "r@2026-01-01T10:00:00Z succeeded: resumed after an interrupted run", "r@2026-01-01T10:01:00Z succeeded",
        ])
        XCTAssertEqual(try fixture.journal.fires(runID: "r@2026-01-01T10:00:00Z").map(\.id), [row.id])
    }

    /// Webhook deliveries of one event reaching listeners on several hosts at once:
    /// exactly one is the first.
    func testOneEventDeliveredToSeveralHostsAtOnceIsNewOnlyOnce() throws {
        let location = JournalLocation.postgres(try TestPostgres.freshSchema(TestPostgres.requiredBaseURL()))
        let journals = try (0..<4).map { _ in try Journal(location) }
        let firsts = ErrorList()
        let group = DispatchGroup()
        for (n, journal) in journals.enumerated() {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                for event in 0..<20 {
                    do {
                        let (_, isNew) = try journal.recordTriggerEvent(
                            eventID: "wev_\(event)", trigger: "t", eventType: "user.suspended", body: "{}", runID: "t@wev_\(event)")
                        if isNew { firsts.add(Marker(text: "wev_\(event)")) }
                    } catch { firsts.add(Marker(text: "host \(n): \(error)")) }
                }
            }
        }
        group.wait()
        XCTAssertEqual(firsts.all.map { "\($0)" }.sorted(), (0..<20).map { "wev_\($0)" }.sorted())
        XCTAssertEqual(try journals[0].triggerEvents("wev_7").first?.deliveries, 4)
    }
}

private struct Marker: Error, CustomStringConvertible {
    let text: String
    var description: String { text }
}
