import Foundation
import Scheduler
import XCTest
import RunJournal
import Configuration
import Automation

/// `JobScheduler` over a real journal and real run locks, with an executor double and
/// an injected clock.
final class JobSchedulerTests: XCTestCase {
    /// Runs one pass at each time; returns the run ids the executor ran, in order.
    func passes(_ fixture: JobsFixture, _ scheduler: JobScheduler, _ times: [String]) throws {
        for time in times {
            fixture.clock.set(time)
            try scheduler.runDue(now: fixture.clock.now)
        }
    }

    /// Starts `scheduler.runDue(now:)` on a thread with the fire `runID` held, and
    /// returns once that fire runs; `done` is left when the pass ends.
    func startHeld(_ fixture: JobsFixture, _ scheduler: JobScheduler, now: String, _ runID: String,
                   done: DispatchGroup) {
        fixture.executor.hold(runID)
        done.enter()
        Thread.detachNewThread { try? scheduler.runDue(now: at(now)); done.leave() }
        XCTAssertTrue(fixture.executor.waitUntilRunning(runID))
    }

    func testMinutelyAcrossAnOutageUnderEachCatchUpPolicy() throws {
        let cases: [(CatchUpPolicy, [String], [String])] = [
            (.none, ["m@2026-01-01T10:00:00Z", "m@2026-01-01T10:01:00Z", "m@2026-01-01T10:05:00Z"],
             ["m@2026-01-01T10:02:00Z missed: 3 fires through 2026-01-01T10:04:00Z, late by 60 s or more (catch_up none)"]),
            (.latest, ["m@2026-01-01T10:00:00Z", "m@2026-01-01T10:01:00Z", "m@2026-01-01T10:05:00Z"],
             ["m@2026-01-01T10:02:00Z missed: 3 fires through 2026-01-01T10:04:00Z, late by 60 s or more (catch_up latest)"]),
            (.all(max: 2), ["m@2026-01-01T10:00:00Z", "m@2026-01-01T10:01:00Z", "m@2026-01-01T10:03:00Z",
                            "m@2026-01-01T10:04:00Z", "m@2026-01-01T10:05:00Z"],
             ["m@2026-01-01T10:02:00Z missed: 1 fire through 2026-01-01T10:02:00Z, late by 60 s or more (catch_up { all = 2 })"]),
        ]
        for (policy, ran, missed) in cases {
            let fixture = try JobsFixture(now: "2026-01-01T10:00:05Z")
            let scheduler = try fixture.scheduler([try fixture.job("m", "* * * * *", catchUp: policy)])
            // 10:00 and 10:01 on time, 10:01 looked at twice, then nothing ran until 10:05:30.
            try passes(fixture, scheduler, ["2026-01-01T10:00:05Z", "2026-01-01T10:01:05Z", "2026-01-01T10:01:40Z",
                                            "2026-01-01T10:05:30Z", "2026-01-01T10:05:50Z"])
            XCTAssertEqual(fixture.executor.runs, ran, "\(policy)")
            XCTAssertEqual(try fixture.history().filter { $0.contains(" missed") }, missed, "\(policy)")
            XCTAssertEqual(try fixture.history().filter { $0.hasSuffix(" succeeded") }.count, ran.count, "\(policy)")
        }
    }

    func testLatestRunsTheLatestLateFireWhenNoneIsOnTime() throws {
        let fixture = try JobsFixture(now: "2026-01-01T10:00:10Z")
        let scheduler = try fixture.scheduler([try fixture.job("five", "*/5 * * * *", catchUp: .latest)])
        try passes(fixture, scheduler, ["2026-01-01T10:00:10Z", "2026-01-01T10:18:00Z"])
        XCTAssertEqual(fixture.executor.runs, ["five@2026-01-01T10:00:00Z", "five@2026-01-01T10:15:00Z"])
        XCTAssertEqual(try fixture.history(), [
            "five@2026-01-01T10:00:00Z succeeded",
            "five@2026-01-01T10:05:00Z missed: 2 fires through 2026-01-01T10:10:00Z, late by 60 s or more (catch_up latest)",
            "five@2026-01-01T10:15:00Z succeeded",
        ])
    }

    func testAJobSeenForTheFirstTimeMissedNothing() throws {
        let fixture = try JobsFixture(now: "2026-01-01T10:30:00Z")
        let scheduler = try fixture.scheduler([try fixture.job("h", "0 * * * *", catchUp: .all(max: 5))])
        try passes(fixture, scheduler, ["2026-01-01T10:30:00Z"])
        XCTAssertEqual(fixture.executor.runs, [])
        XCTAssertEqual(try fixture.history(), [])
    }

    func testDaylightSavingTimeInBerlin() throws {
        // Spring forward on 2026-03-29 (02:00 CET → 03:00 CEST): 02:30 fires at 03:00 CEST
        // (01:00Z). Fall back on 2026-10-25 (03:00 CEST → 02:00 CET): 02:30 fires once, at
        // 02:30 CEST (00:30Z), not again at 02:30 CET (01:30Z).
        let fixture = try JobsFixture(now: "2026-03-28T01:30:10Z")
        let scheduler = try fixture.scheduler([try fixture.job("night", "30 2 * * *", zone: "Europe/Berlin")])
        try passes(fixture, scheduler, ["2026-03-28T01:30:10Z", "2026-03-29T01:00:10Z", "2026-03-29T01:30:10Z",
                                        "2026-10-24T00:30:10Z", "2026-10-25T00:30:10Z", "2026-10-25T01:30:10Z"])
        XCTAssertEqual(fixture.executor.runs, [
            "night@2026-03-28T01:30:00Z", "night@2026-03-29T01:00:00Z", "night@2026-10-24T00:30:00Z",
            "night@2026-10-25T00:30:00Z",
        ])
        XCTAssertEqual(try fixture.history(), [
            "night@2026-03-28T01:30:00Z succeeded", "night@2026-03-29T01:00:00Z succeeded",
            "night@2026-03-30T00:30:00Z missed: 208 fires through 2026-10-23T00:30:00Z, late by 60 s or more (catch_up none)",
            "night@2026-10-24T00:30:00Z succeeded", "night@2026-10-25T00:30:00Z succeeded",
        ])
    }

    func testTwoSchedulersOnOneJournalRunEachFireOnce() throws {
        let fixture = try JobsFixture(now: "2026-01-01T10:00:05Z")
        let jobs = [try fixture.job("a", "* * * * *"), try fixture.job("b", "* * * * *", catchUp: .all(max: 3))]
        let first = try fixture.scheduler(jobs), second = try fixture.scheduler(jobs)
        XCTAssertEqual(fixture.runDueTogether(first, second), [])
        let ran = fixture.executor.runs
        XCTAssertEqual(ran.sorted(), (0..<4).flatMap { ["a@2026-01-01T10:0\($0):00Z", "b@2026-01-01T10:0\($0):00Z"] }.sorted())
        for skip in try fixture.history().filter({ $0.contains(" skipped") }) {
            XCTAssertTrue(skip.contains(" skipped: already fired ("), skip)
        }
    }

    func testAFireAnotherSchedulerHoldsOrRanIsRecordedAlreadyFired() throws {
        let fixture = try JobsFixture(now: "2026-01-01T10:00:05Z")
        let jobs = [try fixture.job("a", "* * * * *")]
        let first = try fixture.scheduler(jobs), second = try fixture.scheduler(jobs), third = try fixture.scheduler(jobs)
        // The second and third decide before the first has recorded anything.
        let secondDue = try second.plan(now: fixture.clock.now), thirdDue = try third.plan(now: fixture.clock.now)
        let done = DispatchGroup()
        startHeld(fixture, first, now: "2026-01-01T10:00:05Z", "a@2026-01-01T10:00:00Z", done: done)
        XCTAssertNil(try second.fire(secondDue[0]))
        fixture.executor.release("a@2026-01-01T10:00:00Z")
        done.wait()
        XCTAssertNil(try third.fire(thirdDue[0]))
        XCTAssertEqual(fixture.executor.runs, ["a@2026-01-01T10:00:00Z"])
        XCTAssertEqual(try fixture.history(), [
            "a@2026-01-01T10:00:00Z succeeded",
            "a@2026-01-01T10:00:00Z skipped: already fired (running in process \(getpid()))",
            "a@2026-01-01T10:00:00Z skipped: already fired (succeeded)",
        ])
    }

    func testOverlapSkipRecordsTheFireThatCameDueWhileThePreviousRan() throws {
        let fixture = try JobsFixture(now: "2026-01-01T10:00:05Z")
        let job = try fixture.job("s", "* * * * *", overlap: .skip)
        let first = try fixture.scheduler([job]), second = try fixture.scheduler([job])
        let done = DispatchGroup()
        startHeld(fixture, first, now: "2026-01-01T10:00:05Z", "s@2026-01-01T10:00:00Z", done: done)
        try second.runDue(now: at("2026-01-01T10:01:05Z"))
        fixture.executor.release("s@2026-01-01T10:00:00Z")
        done.wait()
        try second.runDue(now: at("2026-01-01T10:02:05Z"))
        XCTAssertEqual(fixture.executor.runs, ["s@2026-01-01T10:00:00Z", "s@2026-01-01T10:02:00Z"])
        XCTAssertEqual(try fixture.history(), [
            "s@2026-01-01T10:00:00Z succeeded",
            "s@2026-01-01T10:01:00Z skipped: overlap: s@2026-01-01T10:00:00Z is still running (overlap skip)",
            "s@2026-01-01T10:02:00Z succeeded",
        ])
    }

    func testOverlapQueueRunsTheFireAfterThePreviousEnds() throws {
        let fixture = try JobsFixture(now: "2026-01-01T10:00:05Z")
        let job = try fixture.job("q", "* * * * *", overlap: .queue)
        let first = try fixture.scheduler([job]), second = try fixture.scheduler([job])
        let done = DispatchGroup()
        startHeld(fixture, first, now: "2026-01-01T10:00:05Z", "q@2026-01-01T10:00:00Z", done: done)
        done.enter()
        Thread.detachNewThread { try? second.runDue(now: at("2026-01-01T10:01:05Z")); done.leave() }
        // The second fire is claimed and waits.
        let deadline = Date().addingTimeInterval(10)
        while try fixture.history().last != "q@2026-01-01T10:01:00Z queued: queued behind q@2026-01-01T10:00:00Z (overlap queue)"
                && Date() < deadline { usleep(10_000) }
        XCTAssertEqual(fixture.executor.runs, ["q@2026-01-01T10:00:00Z"])
        fixture.executor.release("q@2026-01-01T10:00:00Z")
        done.wait()
        XCTAssertEqual(fixture.executor.runs, ["q@2026-01-01T10:00:00Z", "q@2026-01-01T10:01:00Z"])
        XCTAssertEqual(try fixture.history(), [
            "q@2026-01-01T10:00:00Z succeeded",
            "q@2026-01-01T10:01:00Z succeeded: queued behind q@2026-01-01T10:00:00Z (overlap queue)",
        ])
        let rows = try fixture.journal.fires(job: "q")
        XCTAssertGreaterThanOrEqual(rows[0].startedAt!, rows[1].finishedAt!, "the queued fire started before the first ended")
    }

    func testAFailedFireTellsTheFailureNotifier() throws {
        let fixture = try JobsFixture(now: "2026-01-01T10:00:05Z")
        fixture.executor.results["f@2026-01-01T10:00:00Z"] = FireResult(exitCode: 1, message: "recipes/r.lua:3: boom\nstack")
        fixture.executor.results["f@2026-01-01T10:01:00Z"] = FireResult(exitCode: 4, message: "timeout")
        let scheduler = try fixture.scheduler([try fixture.job("f", "* * * * *", onFailure: "ops-pager"),
                                               try fixture.job("g", "* * * * *")])
        fixture.executor.results["g@2026-01-01T10:00:00Z"] = FireResult(exitCode: 1, message: "no on_failure")
        try scheduler.runDue(now: at("2026-01-01T10:00:05Z"))
        fixture.notifier.error = NotifierDown()
        try scheduler.runDue(now: at("2026-01-01T10:01:05Z"))
        XCTAssertEqual(fixture.notifier.failures, [
            JobFailure(job: "f", runID: "f@2026-01-01T10:00:00Z", exitCode: 1, message: "recipes/r.lua:3: boom\nstack",
                       dispatch: "ops-pager"),
            JobFailure(job: "f", runID: "f@2026-01-01T10:01:00Z", exitCode: 4, message: "timeout", dispatch: "ops-pager"),
        ])
        let rows = Array(try fixture.journal.fires(job: "f").reversed())
        XCTAssertEqual(rows.map(\.status), [.failed, .failed])
        XCTAssertEqual(rows.map(\.exitCode), [1, 4])
        XCTAssertEqual(rows.map(\.reason), ["recipes/r.lua:3: boom", "timeout"])
        XCTAssertEqual(rows.map(\.notified), ["sent to the test double", #"dispatch "ops-pager" not notified: Dispatch answered 503"#])
        XCTAssertNil(try fixture.journal.fires(job: "g").first?.notified)
        XCTAssertEqual(try UnsentFailureNotifier().notify(fixture.notifier.failures[0]),
                       #"dispatch "ops-pager" not notified: no failure notifier is configured"#)
    }

    func testAnInterruptedFireIsResumedNotRepeated() throws {
        let fixture = try JobsFixture(now: "2026-01-01T10:00:05Z")
        // A scheduler claimed 10:00 and died while it ran: its row says fired, its lock is free.
        let row = try fixture.journal.recordFire(NewFire(job: "r", scheduledAt: at("2026-01-01T10:00:00Z"),
                                                         runID: "r@2026-01-01T10:00:00Z", status: .fired))
        let scheduler = try fixture.scheduler([try fixture.job("r", "* * * * *")])
        try scheduler.runDue(now: at("2026-01-01T10:01:05Z"))
        XCTAssertEqual(fixture.executor.runs, ["r@2026-01-01T10:00:00Z", "r@2026-01-01T10:01:00Z"])
        XCTAssertEqual(fixture.executor.resumes, ["r@2026-01-01T10:00:00Z"])
        XCTAssertEqual(try fixture.history(), [
            "r@2026-01-01T10:00:00Z succeeded: resumed after an interrupted run", "r@2026-01-01T10:01:00Z succeeded",
        ])
        XCTAssertEqual(try fixture.journal.fires(runID: "r@2026-01-01T10:00:00Z").map(\.id), [row.id])
    }

    func testAFireByHandDoesNotCountAsTheScheduledOne() throws {
        let fixture = try JobsFixture(now: "2026-01-01T10:00:30Z")
        let job = try fixture.job("m", "0 * * * *")
        let scheduler = try fixture.scheduler([job])
        let record = try scheduler.fire(scheduler.manualFire(job))
        let id = try XCTUnwrap(record?.runID)
        XCTAssertNotNil(id.range(of: #"^m@manual-2026-01-01T10:00:30\.000Z-[0-9a-f]{6}$"#, options: .regularExpression), id)
        XCTAssertEqual(record?.trigger, .manual)
        try scheduler.runDue(now: at("2026-01-01T10:00:40Z"))
        XCTAssertEqual(fixture.executor.runs, [id, "m@2026-01-01T10:00:00Z"])
    }

    func testTwoFiresByHandAtTheSameInstantBothRun() throws {
        let fixture = try JobsFixture(now: "2026-01-01T10:00:30Z")
        let job = try fixture.job("m", "0 * * * *")
        let scheduler = try fixture.scheduler([job])
        let first = try scheduler.fire(scheduler.manualFire(job))
        let second = try scheduler.fire(scheduler.manualFire(job))
        XCTAssertEqual(first?.status, .succeeded)
        XCTAssertEqual(second?.status, .succeeded, second?.reason ?? "")
        XCTAssertNotEqual(first?.runID, second?.runID)
        XCTAssertEqual(fixture.executor.runs.count, 2)
    }

    func testServeFiresEachMinuteAndStopsAfterTheRunningFire() throws {
        let fixture = try JobsFixture(now: "2026-01-01T10:00:00Z")
        // The clock runs from 10:00:59.7: the 10:00 fire is on time at once, 10:01 comes 0.3 s later.
        let start = Date(), base = at("2026-01-01T10:00:59Z")
        let journal = try fixture.journal
        let scheduler = JobScheduler(
            jobs: JobsConfig(source: nil, jobs: [try fixture.job("t", "* * * * *", overlap: .queue)]), journal: journal,
            state: fixture.state, executor: fixture.executor, clock: { base.addingTimeInterval(0.7 + Date().timeIntervalSince(start)) })
        fixture.executor.hold("t@2026-01-01T10:01:00Z")
        let done = DispatchGroup()
        done.enter()
        Thread.detachNewThread { scheduler.serve(onError: { _ in }); done.leave() }
        XCTAssertTrue(fixture.executor.waitUntilRunning("t@2026-01-01T10:01:00Z"))
        scheduler.stop.fire()
        XCTAssertEqual(done.wait(timeout: .now() + 0.3), .timedOut, "serve returned while a fire was running")
        fixture.executor.release("t@2026-01-01T10:01:00Z")
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(fixture.executor.runs, ["t@2026-01-01T10:00:00Z", "t@2026-01-01T10:01:00Z"])
        XCTAssertEqual(try fixture.history(), ["t@2026-01-01T10:00:00Z succeeded", "t@2026-01-01T10:01:00Z succeeded"])
    }
}

final class ErrorList: @unchecked Sendable {
    private let lock = NSLock()
    private var errors: [Error] = []
    func add(_ error: Error) { lock.withLock { errors.append(error) } }
    var all: [Error] { lock.withLock { errors } }
}
