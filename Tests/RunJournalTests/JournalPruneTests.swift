import Foundation
import XCTest
import SystemText
import JournalTestSupport
@testable import RunJournal

/// Retention (`Journal.prune`): what goes with a run, what is always kept, bounded
/// batches, dry runs, and finishing a prune that was killed mid-way — on both backends.
final class JournalPruneTests: XCTestCase {
    static let day: TimeInterval = 86_400
    static let now = Fixture.start

    /// A run started `daysAgo` days before `now`, finished with `status`, with `writes`
    /// writes and `reads` recorded reads (the clock moved to its start).
    func addRun(_ journal: Journal, _ clock: TestClock, _ id: String, daysAgo: Double, status: RunStatus = .succeeded,
                mode: RunMode = .run, writes: Int = 2, reads: Int = 1, outputFolder: String? = nil,
                recipe: String = "recipes/offboard.lua") throws {
        clock.set(Self.now.addingTimeInterval(-daysAgo * Self.day))
        var start = Fixture.runStart(id, mode: mode)
        start.recipePath = recipe
        start.outputFolder = outputFolder
        try journal.startNewRun(start, masking: SecretRedactor())
        let recorded = (0..<reads).map { RecordedRead(key: "rd1-\($0)", sequence: $0 + 1, method: "GET", path: "/users/\($0)", response: #"{"body":{}}"#) }
        for n in 0..<writes {
            _ = try journal.beginWrite(runID: id, sequence: n + 1, key: "k\(n)", method: "POST", path: "/groups/g/members",
                                       bodySHA256: nil, reads: n == 0 ? recorded : [])
            try journal.recordDone(runID: id, key: "k\(n)", httpStatus: 200, responseJSON: "{}", masking: SecretRedactor())
        }
        if writes == 0 && !recorded.isEmpty { try journal.recordReads(runID: id, recorded) }
        if status != .running { try journal.finishRun(id: id, status: status, exitCode: status == .succeeded ? 0 : 1) }
        clock.set(Self.now)
    }

    func rule(olderThanDays days: Double, keepFailedDays: Double? = nil) -> PruneRule {
        PruneRule(before: Self.now.addingTimeInterval(-days * Self.day),
                  unfinishedBefore: keepFailedDays.map { Self.now.addingTimeInterval(-$0 * Self.day) })
    }

    func count(_ journal: Journal, _ table: String) throws -> Int {
        try journal.reading { db in try db.first("SELECT count(*) FROM \(table)") { $0.int(0) } ?? -1 }
    }

    /// An old run goes with its writes, reads, fire and trigger event; a young one stays whole.
    func testAnOldRunGoesWithEverythingItOwns() throws {
        try eachJournalBackend { backend in
            let clock = TestClock(Self.now)
            let journal = try backend.journal(clock: clock.read)
            try addRun(journal, clock, "nightly@old", daysAgo: 100, writes: 3, reads: 2)
            try journal.recordFire(NewFire(job: "nightly", scheduledAt: Self.now.addingTimeInterval(-100 * Self.day),
                                           runID: "nightly@old", status: .succeeded))
            _ = try journal.recordTriggerEvent(eventID: "wev_1", trigger: "onboard", eventType: "user.created", body: "{}", runID: "nightly@old")
            try addRun(journal, clock, "nightly@young", daysAgo: 10, writes: 1, reads: 1)
            try journal.recordFire(NewFire(job: "nightly", scheduledAt: Self.now.addingTimeInterval(-10 * Self.day),
                                           runID: "nightly@young", status: .succeeded))

            let report = try journal.prune(rule(olderThanDays: 90), keep: RetentionKeep(locks: TestLocks(), unfinishedBefore: nil),
                                           exportsRoot: nil)
            XCTAssertEqual([report.runs, report.writes, report.reads, report.fires, report.triggerEvents], [1, 3, 2, 1, 1])
            XCTAssertNil(try journal.run(id: "nightly@old"))
            XCTAssertEqual(try journal.writes(runID: "nightly@old"), [])
            XCTAssertEqual(try journal.recordedReadTotals(runID: "nightly@old").count, 0)
            XCTAssertEqual(try journal.triggerEvents("wev_1"), [])
            XCTAssertEqual(try journal.fires(job: "nightly").map(\.runID), ["nightly@young"])
            XCTAssertEqual(try journal.writes(runID: "nightly@young").count, 1)
            XCTAssertEqual(try journal.recordedReadTotals(runID: "nightly@young").count, 1)
            XCTAssertEqual(try count(journal, "pruning"), 0)
            XCTAssertEqual(try journal.lastPruneAt(), Self.now)
        }
    }

    /// A running run, a run that can still be resumed (failed, stopped, interrupted) and
    /// an unapplied plan are kept however old; an unfinished run older than the
    /// unfinished limit goes.
    func testWhatCanStillBeResumedOrAppliedIsKept() throws {
        try eachJournalBackend { backend in
            let clock = TestClock(Self.now)
            let journal = try backend.journal(clock: clock.read)
            try addRun(journal, clock, "live", daysAgo: 200, status: .running)
            try addRun(journal, clock, "dead", daysAgo: 200, status: .running)
            try addRun(journal, clock, "failed", daysAgo: 200, status: .failed)
            try addRun(journal, clock, "stopped", daysAgo: 200, status: .stopped)
            try addRun(journal, clock, "plan", daysAgo: 200, mode: .plan)
            try addRun(journal, clock, "applied", daysAgo: 200, mode: .apply)
            try addRun(journal, clock, "failed-long-ago", daysAgo: 400, status: .failed)
            try addRun(journal, clock, "dead-long-ago", daysAgo: 400, status: .running)
            let locks = TestLocks(held: ["live"])

            let report = try journal.prune(rule(olderThanDays: 90, keepFailedDays: 365),
                                           keep: RetentionKeep(locks: locks, unfinishedBefore: Self.now.addingTimeInterval(-365 * Self.day)),
                                           exportsRoot: nil)
            XCTAssertEqual(report.runs, 3)
            XCTAssertEqual(report.kept, [.running: 1, .resumable: 3, .plan: 1])
            XCTAssertEqual(Set(try journal.listRuns(limit: 100).map(\.id)), ["live", "dead", "failed", "stopped", "plan"])
            XCTAssertEqual(locks.acquired, ["dead-long-ago", "failed-long-ago"], "unfinished runs are locked while they go")

            // Without an unfinished limit, no unfinished run ever goes.
            try addRun(journal, clock, "failed-ancient", daysAgo: 4000, status: .failed)
            let again = try journal.prune(rule(olderThanDays: 90), keep: RetentionKeep(locks: locks, unfinishedBefore: nil), exportsRoot: nil)
            XCTAssertEqual(again.runs, 0)
            XCTAssertEqual(again.kept[.resumable], 4)
        }
    }

    /// A rule added to `RetentionKeep.also` keeps what it names.
    func testAnAddedKeepRuleIsHonoured() throws {
        try eachJournalBackend { backend in
            let clock = TestClock(Self.now)
            let journal = try backend.journal(clock: clock.read)
            try addRun(journal, clock, "approved", daysAgo: 100)
            try addRun(journal, clock, "other", daysAgo: 100)
            let keep = RetentionKeep(locks: TestLocks(), unfinishedBefore: nil, also: [{ $0.id == "approved" ? .referenced : nil }])
            let report = try journal.prune(rule(olderThanDays: 90), keep: keep, exportsRoot: nil)
            XCTAssertEqual(report.runs, 1)
            XCTAssertEqual(report.kept, [.referenced: 1])
            XCTAssertNotNil(try journal.run(id: "approved"))
        }
    }

    /// Status, recipe and job narrow the selection.
    func testStatusRecipeAndJobNarrowTheSelection() throws {
        try eachJournalBackend { backend in
            let clock = TestClock(Self.now)
            let journal = try backend.journal(clock: clock.read)
            try addRun(journal, clock, "a", daysAgo: 100, recipe: "/r/a.lua")
            try addRun(journal, clock, "b", daysAgo: 100, recipe: "/r/b.lua")
            try addRun(journal, clock, "c", daysAgo: 100, status: .failed, recipe: "/r/a.lua")
            try addRun(journal, clock, "sync@1", daysAgo: 100)
            try journal.recordFire(NewFire(job: "sync", scheduledAt: Self.now.addingTimeInterval(-100 * Self.day), runID: "sync@1", status: .succeeded))
            let keep = RetentionKeep(locks: TestLocks(), unfinishedBefore: Self.now)

            var byRecipe = rule(olderThanDays: 90)
            byRecipe.recipePath = "/r/a.lua"
            byRecipe.statuses = [.succeeded]
            XCTAssertEqual(try journal.prune(byRecipe, keep: keep, exportsRoot: nil).runs, 1)
            XCTAssertNil(try journal.run(id: "a"))
            XCTAssertNotNil(try journal.run(id: "c"))

            var byJob = rule(olderThanDays: 90)
            byJob.job = "sync"
            let report = try journal.prune(byJob, keep: keep, exportsRoot: nil)
            XCTAssertEqual([report.runs, report.fires], [1, 0], "the job's latest scheduled fire stays for the scheduler")
            XCTAssertNil(try journal.run(id: "sync@1"))
            XCTAssertEqual(try journal.fires(job: "sync").count, 1)
            XCTAssertEqual(Set(try journal.listRuns().map(\.id)), ["b", "c"])
        }
    }

    /// A dry run reports exactly what the prune then removes, and removes nothing.
    func testADryRunReportsWhatThePruneRemoves() throws {
        try eachJournalBackend { backend in
            let clock = TestClock(Self.now)
            let journal = try backend.journal(clock: clock.read)
            for n in 0..<5 { try addRun(journal, clock, "old\(n)", daysAgo: 100 + Double(n), writes: n, reads: 1) }
            try journal.recordFire(NewFire(job: "j", scheduledAt: Self.now.addingTimeInterval(-200 * Self.day), runID: "j@skipped", status: .skipped))
            try journal.recordFire(NewFire(job: "j", scheduledAt: Self.now.addingTimeInterval(-150 * Self.day), runID: "j@missed", status: .missed))
            let keep = RetentionKeep(locks: TestLocks(), unfinishedBefore: nil)
            let dry = try journal.prune(rule(olderThanDays: 90), keep: keep, exportsRoot: nil, dryRun: true)
            XCTAssertEqual(try journal.listRuns().count, 5)
            XCTAssertNil(try journal.lastPruneAt())
            let done = try journal.prune(rule(olderThanDays: 90), keep: keep, exportsRoot: nil)
            XCTAssertEqual(dry, done)
            XCTAssertEqual([done.runs, done.writes, done.reads, done.fires], [5, 10, 5, 1])
            XCTAssertEqual(try journal.fires(job: "j").map(\.runID), ["j@missed"])
        }
    }

    /// Batches of a few rows remove as much as one big batch (a run of many writes
    /// spans several transactions).
    func testSmallBatchesRemoveEverything() throws {
        try eachJournalBackend { backend in
            let clock = TestClock(Self.now)
            let journal = try backend.journal(clock: clock.read)
            for n in 0..<7 { try addRun(journal, clock, "r\(n)", daysAgo: 100, writes: 5, reads: 3) }
            try addRun(journal, clock, "young", daysAgo: 1)
            let report = try journal.prune(rule(olderThanDays: 90), keep: RetentionKeep(locks: TestLocks(), unfinishedBefore: nil),
                                           exportsRoot: nil, batchRows: 2)
            XCTAssertEqual([report.runs, report.writes, report.reads], [7, 35, 21])
            XCTAssertEqual(try count(journal, "writes"), 2)
            XCTAssertEqual(try count(journal, "reads"), 1)
        }
    }

    /// Runs a killed prune had begun (recorded in `pruning`, some rows gone) are finished
    /// by the next prune, whatever that one's rule.
    func testAPruneKilledMidwayIsFinishedByTheNext() throws {
        try eachJournalBackend { backend in
            let clock = TestClock(Self.now)
            let journal = try backend.journal(clock: clock.read)
            try addRun(journal, clock, "half", daysAgo: 100, writes: 4, reads: 2)
            try journal.transaction { db in
                _ = try db.run("INSERT INTO pruning (run_id) VALUES ('half')", [])
                _ = try db.run("DELETE FROM writes WHERE run_id = 'half' AND key IN ('k0', 'k1')", [])
            }
            let report = try journal.prune(PruneRule(before: .distantPast), keep: RetentionKeep(locks: TestLocks(), unfinishedBefore: nil),
                                           exportsRoot: nil)
            XCTAssertEqual([report.finishedFromEarlier, report.runs, report.writes, report.reads], [1, 1, 2, 2])
            XCTAssertNil(try journal.run(id: "half"))
            XCTAssertEqual(try count(journal, "pruning"), 0)
        }
    }

    /// The export folder `exportsRoot/<id>` goes with its run; a folder elsewhere is the user's and stays.
    func testTheRunsExportFolderGoesAndAnyOtherStays() throws {
        let root = try Fixture.tempDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let exports = root.appendingPathComponent("runs").path
        try eachJournalBackend { backend in
            let clock = TestClock(Self.now)
            let journal = try backend.journal(clock: clock.read)
            let own = exports + "/mine", user = root.path + "/chosen"
            for folder in [own + "/nested", user] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
            try Data(repeating: 7, count: 1000).write(to: URL(fileURLWithPath: own + "/nested/users.csv"))
            try Data(repeating: 7, count: 24).write(to: URL(fileURLWithPath: own + "/summary.json"))
            try addRun(journal, clock, "mine", daysAgo: 100, outputFolder: own)
            try addRun(journal, clock, "chosen", daysAgo: 100, outputFolder: user)
            let keep = RetentionKeep(locks: TestLocks(), unfinishedBefore: nil)
            let dry = try journal.prune(rule(olderThanDays: 90), keep: keep, exportsRoot: exports, dryRun: true)
            XCTAssertEqual([dry.exportFolders, Int(dry.exportBytes)], [1, 1024])
            let report = try journal.prune(rule(olderThanDays: 90), keep: keep, exportsRoot: exports)
            XCTAssertEqual([report.runs, report.exportFolders, Int(report.exportBytes)], [2, 1, 1024])
            XCTAssertFalse(FileManager.default.fileExists(atPath: own))
            XCTAssertTrue(FileManager.default.fileExists(atPath: user))
        }
    }

    /// On a journal file, a prune that deletes the newest writes keeps the history mark
    /// rising (the next checked open raises no alarm), and gives the freed pages back.
    func testAFilePrunedOfItsNewestWritesOpensCleanAndShrinks() throws {
        let folder = try Fixture.tempDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent(Journal.fileName).path
        let clock = TestClock(Self.now)
        do {
            let journal = try Journal.openChecked(path: path, check: .always)
            let big = String(repeating: "x", count: 3000)
            try journal.startNewRun(Fixture.runStart("bulky"), masking: SecretRedactor())
            for n in 0..<400 {
                _ = try journal.beginWrite(runID: "bulky", sequence: n + 1, key: "k\(n)", method: "POST", path: "/p/\(big)", bodySHA256: nil)
                try journal.recordDone(runID: "bulky", key: "k\(n)", httpStatus: 200, responseJSON: "{}", masking: SecretRedactor())
            }
            try journal.finishRun(id: "bulky", status: .succeeded, exitCode: 0)
            _ = clock
        }
        let sizeBefore = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        do {
            let journal = try Journal.openChecked(path: path, check: .always)
            let report = try journal.prune(PruneRule(before: Date().addingTimeInterval(3600)),
                                           keep: RetentionKeep(locks: TestLocks(), unfinishedBefore: nil), exportsRoot: nil, batchRows: 100)
            XCTAssertEqual([report.runs, report.writes], [1, 400])
            XCTAssertGreaterThan(report.journalBytesFreed, 1_000_000)
            try journal.startNewRun(Fixture.runStart("after"), masking: SecretRedactor())
            _ = try journal.beginWrite(runID: "after", sequence: 1, key: "k", method: "POST", path: "/p", bodySHA256: nil)
        }
        let sizeAfter = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        XCTAssertLessThan(sizeAfter, sizeBefore / 4)
        let reopened = try Journal.openChecked(path: path, check: .always)
        XCTAssertEqual(try reopened.writes(runID: "after").count, 1)
    }

    /// A pruned run's kept output goes with it (its table refers to the run's row, so a
    /// prune that left it would fail on the foreign key); a young run keeps its lines.
    func testAPrunedRunsOutputGoesWithIt() throws {
        try eachJournalBackend { backend in
            let clock = TestClock(Self.now)
            let journal = try backend.journal(clock: clock.read)
            try addRun(journal, clock, "run_old", daysAgo: 100)
            try addRun(journal, clock, "run_young", daysAgo: 10)
            for id in ["run_old", "run_young"] {
                let lines = (1...3).map { RunOutputLine(attempt: 1, sequence: $0, kind: .print, time: Self.now, text: "line \($0)") }
                try journal.appendOutput(runID: id, lines, masking: SecretRedactor())
            }
            let report = try journal.prune(rule(olderThanDays: 90), keep: RetentionKeep(locks: TestLocks(), unfinishedBefore: nil),
                                           exportsRoot: nil)
            XCTAssertEqual(report.runs, 1)
            XCTAssertEqual(try journal.output(runID: "run_old"), [])
            XCTAssertEqual(try journal.output(runID: "run_young").map(\.text), ["line 1", "line 2", "line 3"])
            XCTAssertEqual(try count(journal, "run_output"), 3)
        }
    }

}

/// A clock a test moves.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var now: Date
    init(_ now: Date) { self.now = now }
    func set(_ date: Date) { lock.withLock { now = date } }
    var read: @Sendable () -> Date { { [self] in lock.withLock { now } } }
}

/// Run locks held by name; records what a prune acquired.
final class TestLocks: RunLocks, @unchecked Sendable {
    private let lock = NSLock()
    private let held: Set<String>
    private var taken: [String] = []
    private var holding = 0
    private var most = 0
    init(held: Set<String> = []) { self.held = held }
    var acquired: [String] { lock.withLock { taken.sorted() } }
    /// The most locks held at one time.
    var mostHeldAtOnce: Int { lock.withLock { most } }

    func acquire(_ runID: String) throws -> any HeldRunLock {
        if held.contains(runID) { throw RunLock.Busy(runID: runID, pid: nil) }
        lock.withLock {
            taken.append(runID)
            holding += 1
            most = max(most, holding)
        }
        return Held(runID: runID) { [self] in lock.withLock { holding -= 1 } }
    }

    func isHeld(_ runID: String) -> Bool { held.contains(runID) }

    final class Held: HeldRunLock, @unchecked Sendable {
        let runID: String
        private var onRelease: (() -> Void)?
        init(runID: String, onRelease: @escaping () -> Void) {
            self.runID = runID
            self.onRelease = onRelease
        }
        func release() {
            onRelease?()
            onRelease = nil
        }
    }
}

extension JournalPruneTests {
    /// Unfinished runs are locked while they go, a few a batch at most (on PostgreSQL a
    /// lock is a connection), and every one of them still goes.
    func testABatchHoldsAFewLocksAtMost() throws {
        try eachJournalBackend { backend in
            let clock = TestClock(Self.now)
            let journal = try backend.journal(clock: clock.read)
            let count = Journal.locksPerBatch * 2 + 3
            for n in 0..<count { try addRun(journal, clock, String(format: "f%03d", n), daysAgo: 400, status: .failed, writes: 1, reads: 0) }
            let locks = TestLocks()
            let report = try journal.prune(rule(olderThanDays: 90, keepFailedDays: 365),
                                           keep: RetentionKeep(locks: locks, unfinishedBefore: Self.now.addingTimeInterval(-365 * Self.day)),
                                           exportsRoot: nil)
            XCTAssertEqual([report.runs, report.writes], [count, count])
            XCTAssertEqual(locks.acquired.count, count)
            XCTAssertLessThanOrEqual(locks.mostHeldAtOnce, Journal.locksPerBatch)
        }
    }
}

extension JournalPruneTests {
    /// Only `root/<id>` is a run's own export folder: an id that would climb out of the
    /// root or name a folder deeper down never does.
    func testOnlyOneComponentUnderTheRootIsARunsOwnFolder() {
        XCTAssertTrue(ExportFolder.isOwn("/s/runs/job@1", runID: "job@1", root: "/s/runs"))
        XCTAssertFalse(ExportFolder.isOwn("/s/runs/..", runID: "..", root: "/s/runs"))
        XCTAssertFalse(ExportFolder.isOwn("/s/runs/.", runID: ".", root: "/s/runs"))
        XCTAssertFalse(ExportFolder.isOwn("/s/runs/../vault", runID: "../vault", root: "/s/runs"))
        XCTAssertFalse(ExportFolder.isOwn("/s/runs/a/b", runID: "a/b", root: "/s/runs"))
        XCTAssertFalse(ExportFolder.isOwn("/s/runs/", runID: "", root: "/s/runs"))
        XCTAssertFalse(ExportFolder.isOwn("/elsewhere/job@1", runID: "job@1", root: "/s/runs"))
    }
}
