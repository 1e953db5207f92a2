import Foundation
import PostgresKit
import SQLiteKit
import SystemText
import XCTest
import JournalTestSupport
import TestSupport
@testable import RunJournal

final class JournalTests: XCTestCase {
    func testRunsAndWritesPersistAcrossInstancesOnTheSameFile() throws {
        try eachJournalBackend { backend in
            let location = try backend.newLocation()
            do {
                let journal = try Journal(location, clock: { Fixture.start })
                try journal.startRun(Fixture.runStart(), masking: SecretRedactor())
                try journal.recordPending(runID: "run_test", sequence: 1, key: "k1", method: "POST",
                                          path: "/users/usr_ada/suspend", bodySHA256: "d1")
                try journal.recordDone(runID: "run_test", key: "k1", httpStatus: 200, responseJSON: #"{"status":"suspended"}"#, masking: SecretRedactor())
                try journal.recordPending(runID: "run_test", sequence: 2, key: "k2", method: "DELETE",
                                          path: "/users/usr_ada/sessions/ses_1", bodySHA256: nil)
                try journal.updateCounts(runID: "run_test", counts: RunCounts(reads: 3, writes: 2, failed: 1))
            }
            if case .sqlite(let path) = location { XCTAssertTrue(FileManager.default.fileExists(atPath: path)) }

            let later = Fixture.start.addingTimeInterval(60)
            let reopened = try Journal(location, clock: { later })
            let run = try XCTUnwrap(reopened.run(id: "run_test"))
            XCTAssertEqual(run.status, .running)
            XCTAssertEqual(run.mode, .run)
            XCTAssertEqual(run.paramsJSON, #"{"user":"usr_ada"}"#)
            XCTAssertEqual(run.counts, RunCounts(reads: 3, writes: 2, failed: 1))
            XCTAssertEqual(run.startedAt, Fixture.start)

            let writes = try reopened.writes(runID: "run_test")
            XCTAssertEqual(writes.map(\.key), ["k1", "k2"])
            XCTAssertEqual(writes.map(\.state), [.done, .pending])
            XCTAssertEqual(writes[0].responseJSON, #"{"status":"suspended"}"#)
            XCTAssertEqual(writes[0].httpStatus, 200)
            XCTAssertNil(writes[1].bodySHA256)

            try reopened.finishRun(id: "run_test", status: .stopped, counts: RunCounts(writes: 1))
            let finished = try XCTUnwrap(reopened.run(id: "run_test"))
            XCTAssertEqual(finished.status, .stopped)
            XCTAssertEqual(finished.finishedAt, later)
            XCTAssertEqual(finished.counts, RunCounts(writes: 1))
        }
    }

    /// A running run's counts are at least what its writes recorded (the reads noted with
    /// each, every send), and `noteProgress` commits totals at most once a second: another
    /// process sees them without the run ever finishing.
    func testARunningRunCountsTheReadsItsWritesNotedAndEverySend() throws {
        try eachJournalBackend { backend in
            let location = try backend.newLocation()
            let journal = try Journal(location, clock: { Fixture.start })
            let reader = try Journal(location, clock: { Fixture.start })
            try journal.startRun(Fixture.runStart(), masking: SecretRedactor())
            try journal.noteProgress(runID: "run_test", counts: RunCounts(reads: 1))   // the first note commits
            XCTAssertEqual(try reader.run(id: "run_test")?.counts, RunCounts(reads: 1))
            try journal.noteProgress(runID: "run_test", counts: RunCounts(reads: 2))   // within the interval: not
            XCTAssertEqual(try reader.run(id: "run_test")?.counts, RunCounts(reads: 1))
            _ = try journal.beginWrite(runID: "run_test", sequence: 1, key: "k1", method: "POST", path: "/x", bodySHA256: nil,
                                       runReads: 5)
            _ = try journal.beginWrite(runID: "run_test", sequence: 1, key: "k1", method: "POST", path: "/x", bodySHA256: nil,
                                       runReads: 7)   // resent (a second attempt)
            XCTAssertEqual(try reader.run(id: "run_test")?.counts, RunCounts(reads: 7, writes: 2), "what the writes recorded")
            try journal.finishRun(id: "run_test", status: .succeeded, counts: RunCounts(reads: 4, writes: 1), exitCode: 0)
            let finished = try XCTUnwrap(reader.run(id: "run_test"))
            XCTAssertEqual(finished.counts, RunCounts(reads: 4, writes: 1), "a finished run's own counts")
            XCTAssertEqual(finished.exitCode, 0)
        }
    }

    /// A journal closed cleanly is not checked again by a new run; one changed since, or
    /// left by a process that died, is — and a resume always checks.
    func testANewRunChecksTheJournalOnlyIfItWasNotClosedCleanly() throws {
        let dir = try Fixture.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("journal.sqlite").path
        do {
            let journal = try Journal.openChecked(path: path)
            for n in 0..<300 { try journal.startRun(Fixture.runStart("run_\(n)"), masking: SecretRedactor()) }
        }
        XCTAssertTrue(Journal.closedCleanly(path))
        _ = try Journal.openChecked(path: path, check: .always)
        XCTAssertTrue(Journal.closedCleanly(path), "opening and closing changes nothing")

        // Left by a process that died: a log with frames.
        try JournalOpenBenchmark.leaveTheLog(path)
        XCTAssertFalse(Journal.closedCleanly(path))
        _ = try Journal.openChecked(path: path)   // checked, and sound
        XCTAssertTrue(Journal.closedCleanly(path))

        // Changed by something else after a clean close: checked, and refused.
        var data = try Data(contentsOf: URL(fileURLWithPath: path))
        XCTAssertGreaterThan(data.count, 8192)
        for i in 4096..<data.count { data[i] = UInt8(truncatingIfNeeded: i &* 31) }
        try data.write(to: URL(fileURLWithPath: path))
        XCTAssertFalse(Journal.closedCleanly(path))
        XCTAssertThrowsError(try Journal.openChecked(path: path)) { error in
            XCTAssertTrue("\(error)".contains("is damaged (SQLite: "), "\(error)")
        }
        // A listing runs no full check, but the pages it reads at open (the journal's
        // count of commits: Journal+History) are damaged here too, and say so.
        XCTAssertThrowsError(try Journal.openChecked(path: path, check: .skip)) { error in
            XCTAssertTrue("\(error)".contains("is damaged (SQLite: "), "\(error)")
        }
    }

    func testSchemaVersionIsRecordedAndNewerFilesAreRefused() throws {
        let dir = try Fixture.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("journal.sqlite").path
        _ = try Journal(path: path)
        let raw = try SQLiteDatabase(path: path, busyTimeoutMs: 1000)
        var version = 0
        try raw.query("PRAGMA user_version") { version = $0.int(0) }
        XCTAssertEqual(version, Journal.schemaVersion)
        var mode = ""
        try raw.query("PRAGMA journal_mode") { mode = $0.text(0) }
        XCTAssertEqual(mode, "wal")
        try raw.exec("PRAGMA user_version = 99")
        XCTAssertThrowsError(try Journal(path: path)) { error in
            XCTAssertEqual((error as? JournalError)?.code, .schemaTooNew)
        }
    }

    /// PostgreSQL: the version is the one row of `journal_schema`; a newer one is refused.
    func testThePostgresSchemaVersionIsRecordedAndNewerOnesAreRefused() throws {
        let url = try TestPostgres.freshSchema(TestPostgres.requiredBaseURL())
        let journal = try Journal(postgres: url)
        let raw = try PostgresConnection(url: url)
        XCTAssertEqual(try raw.first("SELECT version FROM journal_schema", [], { $0.int(0) }), Journal.schemaVersion)
        XCTAssertEqual(try raw.first("SELECT count(*) FROM journal_schema", [], { $0.int(0) }), 1)
        _ = try Journal(postgres: url)   // opening again changes nothing
        XCTAssertEqual(try raw.first("SELECT count(*) FROM journal_schema", [], { $0.int(0) }), 1)
        try raw.run("UPDATE journal_schema SET version = 99")
        XCTAssertThrowsError(try Journal(postgres: url)) { error in
            XCTAssertEqual((error as? JournalError)?.code, .schemaTooNew)
            XCTAssertTrue("\(error)".contains("has schema version 99, newer than this hubscript understands (\(Journal.schemaVersion))"), "\(error)")
        }
        _ = journal
    }

    func testResumeReopensTheRunAndListRunsIsNewestFirst() throws {
        try eachJournalBackend { backend in
            let clockTime = LockedDate(Fixture.start)
            let journal = try backend.journal(clock: { clockTime.value })
            try journal.startRun(Fixture.runStart("run_a", mode: .plan), masking: SecretRedactor())
            try journal.finishRun(id: "run_a", status: .succeeded)
            clockTime.value = Fixture.start.addingTimeInterval(10)
            try journal.startRun(Fixture.runStart("run_b"), masking: SecretRedactor())
            clockTime.value = Fixture.start.addingTimeInterval(20)
            let resumed = try journal.startRun(Fixture.runStart("run_a", mode: .apply), masking: SecretRedactor())
            XCTAssertEqual(resumed.mode, .apply)
            XCTAssertEqual(resumed.status, .running)
            XCTAssertNil(resumed.finishedAt)
            XCTAssertEqual(resumed.attempts, 2)
            XCTAssertEqual(resumed.startedAt, Fixture.start)
            XCTAssertEqual(try journal.listRuns(limit: 10).map(\.id), ["run_b", "run_a"])
            XCTAssertEqual(try journal.listRuns(limit: 1).map(\.id), ["run_b"])
        }
    }

    func testWritesForAnUnknownRunAreRefused() throws {
        try eachJournalBackend { backend in
            let journal = try backend.journal()
            XCTAssertThrowsError(try journal.recordPending(runID: "run_nope", sequence: 1, key: "k", method: "POST",
                                                           path: "/x", bodySHA256: nil)) { error in
                XCTAssertEqual((error as? JournalError)?.code, .unknownRun)
            }
            XCTAssertThrowsError(try journal.finishRun(id: "run_nope", status: .failed)) { error in
                XCTAssertEqual(error as? JournalError, JournalError(.unknownRun, "the journal holds no run run_nope (see hubscript runs)"))
            }
        }
    }

    func testADoneWriteIsNeverReopenedAndAResendCountsAttempts() throws {
        try eachJournalBackend { backend in
            let journal = try backend.journal()
            try journal.startRun(Fixture.runStart(), masking: SecretRedactor())
            try journal.recordPending(runID: "run_test", sequence: 1, key: "k", method: "POST", path: "/x", bodySHA256: nil)
            try journal.recordPending(runID: "run_test", sequence: 1, key: "k", method: "POST", path: "/x", bodySHA256: nil)
            XCTAssertEqual(try journal.write(runID: "run_test", key: "k")?.attempts, 2)
            try journal.recordDone(runID: "run_test", key: "k", responseJSON: nil, masking: SecretRedactor())
            try journal.recordPending(runID: "run_test", sequence: 1, key: "k", method: "POST", path: "/x", bodySHA256: nil)
            let write = try XCTUnwrap(journal.write(runID: "run_test", key: "k"))
            XCTAssertEqual(write.state, .done)
            XCTAssertEqual(write.attempts, 2)
            XCTAssertNil(write.responseJSON)
        }
    }

    func testTwoInstancesWriteTheSameFileConcurrently() throws {
        try eachJournalBackend { backend in
            let location = try backend.newLocation()
            let journals = [try Journal(location), try Journal(location)]
            let perWorker = 40
            let failures = LockedCounter()
            DispatchQueue.concurrentPerform(iterations: 4) { worker in
                let journal = journals[worker % 2]
                let runID = "run_w\(worker)"
                do {
                    try journal.startRun(Fixture.runStart(runID), masking: SecretRedactor())
                    for n in 1...perWorker {
                        try journal.recordPending(runID: runID, sequence: n, key: "k\(n)", method: "POST",
                                                  path: "/w/\(n)", bodySHA256: nil)
                        try journal.recordDone(runID: runID, key: "k\(n)", responseJSON: "{\"n\":\(n)}", masking: SecretRedactor())
                    }
                } catch {
                    failures.add()
                }
            }
            XCTAssertEqual(failures.value, 0)
            for worker in 0..<4 {
                let writes = try journals[(worker + 1) % 2].writes(runID: "run_w\(worker)")
                XCTAssertEqual(writes.count, perWorker)
                XCTAssertTrue(writes.allSatisfy { $0.state == .done })
            }
        }
    }
}

/// A mutable date for a `@Sendable` clock.
final class LockedDate: @unchecked Sendable {
    private let lock = NSLock()
    private var date: Date
    init(_ date: Date) { self.date = date }
    var value: Date {
        get { lock.withLock { date } }
        set { lock.withLock { date = newValue } }
    }
}

final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
