import Foundation
import SQLiteKit
import SystemText
import XCTest
import JournalTestSupport
@testable import RunJournal

/// A journal that lost committed history — its write-ahead log deleted or damaged, its
/// file replaced — is refused with what happened and what to do, never opened as it
/// reverted; a journal that lost nothing is never refused.
final class JournalHistoryTests: XCTestCase {
    var dir: URL!
    var path: String { dir.appendingPathComponent("journal.sqlite").path }
    var log: String { path + "-wal" }

    override func setUpWithError() throws { dir = try Fixture.tempDirectory() }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: dir) }

    /// Opens, records `runs` new runs, closes (the log is left in place: short).
    func record(_ runs: [String]) throws {
        let journal = try Journal.openChecked(path: path)
        for id in runs { try journal.startRun(Fixture.runStart(id), masking: SecretRedactor()) }
    }

    func expectedLoss(recorded: Int, held: Int) -> String {
        """
        the journal \(path): it has lost committed history: its history mark was \(recorded) after its last commit, \
        the file holds \(held) (its write-ahead log \(path)-wal was deleted or damaged after its last commits, or the \
        machine lost power before they reached the disk); runs, writes and fires recorded in them are forgotten. \
        Nothing was run: a run it forgot would be started afresh and not resumed. Keep a copy of its files \
        (cp -p \(path)* SOMEWHERE/), then either restore them from a backup, or accept the loss with hubscript \
        runs repair --accept-loss (check on the Hub what runs of that time did).
        """
    }

    func assertRefused(_ message: String, file: StaticString = #filePath, line: UInt = #line) {
        for check in [Journal.IntegrityCheck.always, .unlessClosedCleanly, .skip] {
            XCTAssertThrowsError(try Journal.openChecked(path: path, check: check), file: file, line: line) { error in
                guard let journalError = error as? JournalError else { return XCTFail("\(error)", file: file, line: line) }
                XCTAssertEqual(journalError.code, .historyLost, file: file, line: line)
                XCTAssertEqual(journalError.message, message, file: file, line: line)
            }
        }
    }

    func testADeletedLogIsRefused() throws {
        try record(["run_a", "run_b", "run_c"])
        XCTAssertGreaterThan(Journal.size(log) ?? 0, 0)
        unlink(log)
        assertRefused(expectedLoss(recorded: 3, held: 0))
    }

    func testALogWithADamagedHeaderIsRefused() throws {
        try record(["run_a"])
        try record(["run_b", "run_c"])
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: log))
        try handle.write(contentsOf: Data(repeating: 0x5A, count: 32))
        try handle.close()
        assertRefused(expectedLoss(recorded: 3, held: 0))
        // The refusal wrote nothing: the damaged log still holds its frames.
        XCTAssertGreaterThan(Journal.size(log) ?? 0, 4096)
    }

    func testALogWithDamagedFramesIsRefused() throws {
        try record(["run_a", "run_b"])
        var bytes = try Data(contentsOf: URL(fileURLWithPath: log))
        for i in 32..<bytes.count { bytes[i] = UInt8(truncatingIfNeeded: i &* 131) }
        try bytes.write(to: URL(fileURLWithPath: log))
        assertRefused(expectedLoss(recorded: 2, held: 0))
    }

    /// Commits already copied into the file are not lost with the log: only those
    /// after the last checkpoint are counted as lost.
    func testOnlyTheCommitsAfterTheLastCheckpointAreLost() throws {
        do {
            let journal = try Journal.openChecked(path: path)
            for n in 0..<5 { try journal.startRun(Fixture.runStart("run_\(n)"), masking: SecretRedactor()) }
            try journal.locked { _ in try journal.sqlite?.exec("PRAGMA wal_checkpoint(TRUNCATE)") }
            for n in 5..<7 { try journal.startRun(Fixture.runStart("run_\(n)"), masking: SecretRedactor()) }
        }
        unlink(log)
        assertRefused(expectedLoss(recorded: 7, held: 5))
    }

    func testAJournalThatLostNothingOpensRunAfterRun() throws {
        for n in 0..<20 {
            try record(["run_\(n)"])
            if n % 5 == 0 {   // as a process killed after its commits leaves it: no clean close
                unlink(path + "-closed")
            }
        }
        XCTAssertEqual(try Journal.openChecked(path: path, check: .always).listRuns(limit: 100).count, 20)
        // A checkpoint that empties the log loses nothing either.
        do {
            let raw = try SQLiteDatabase(path: path)
            try raw.exec("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        unlink(log)   // empty after the checkpoint: nothing in it
        XCTAssertEqual(try Journal.openChecked(path: path).listRuns(limit: 100).count, 20)
    }

    /// Two journals on one file, written from several threads at once (as two
    /// processes would): the record never runs ahead of the file.
    func testConcurrentWritersRaiseNoFalseAlarm() throws {
        _ = try Journal.openChecked(path: path)
        let group = DispatchGroup()
        let failures = FailureList()
        for writer in 0..<4 {
            DispatchQueue.global().async(group: group) { [path] in
                do {
                    let journal = try Journal.openChecked(path: path)
                    for n in 0..<40 { try journal.startRun(Fixture.runStart("run_\(writer)_\(n)"), masking: SecretRedactor()) }
                } catch { failures.add("\(error)") }
            }
        }
        group.wait()
        XCTAssertEqual(failures.all, [])
        let journal = try Journal.openChecked(path: path, check: .always)
        XCTAssertEqual(try journal.listRuns(limit: 1000).count, 160)
        guard case .present(let record) = JournalCommitLog.read(Journal.commitRecordPath(path)) else {
            return XCTFail("no commit record")
        }
        let file = try XCTUnwrap(try journal.sqlite.flatMap { try Journal.fileCommits($0) })
        XCTAssertGreaterThanOrEqual(file.commits, 160)
        XCTAssertEqual(record.commits, file.commits, "every commit recorded, the last one last")
    }

    /// A live write's commit raises the mark by its new `writes` row, not by the
    /// count (no page more), and a lost write is still a loss.
    func testWritesRaiseTheMarkThroughTheirRows() throws {
        do {
            let journal = try Journal.openChecked(path: path)
            let run = try journal.startRun(Fixture.runStart("run_w"), masking: SecretRedactor())
            for k in 0..<5 {
                _ = try journal.beginWrite(runID: run.id, sequence: k + 1, key: "k\(k)", method: "POST", path: "/x/\(k)", bodySHA256: nil)
                try journal.recordDone(runID: run.id, key: "k\(k)", responseJSON: nil, deferred: true, masking: SecretRedactor())
            }
            try journal.flush()
            let counted = try XCTUnwrap(try journal.sqlite.flatMap { try Journal.fileCommits($0) })
            XCTAssertEqual(counted.commits, 5 + 2, "5 write rows; the run's start and the last outcome's flush counted")
            var bumps = 0
            try journal.sqlite?.query("SELECT commits FROM journal_commits") { bumps = $0.int(0) }
            XCTAssertEqual(bumps, 2)
        }
        unlink(log)
        assertRefused(expectedLoss(recorded: 7, held: 0))
    }

    func testAMissingRecordOfAJournalWithCommitsIsRefused() throws {
        try record(["run_a"])
        unlink(Journal.commitRecordPath(path))
        assertRefused("""
            the journal \(path): its commit record \(path)-commits is missing (the journal's history mark is 1), so \
            whether the journal lost committed history cannot be told. Nothing was run: a run it forgot would be started afresh \
            and not resumed. Keep a copy of its files (cp -p \(path)* SOMEWHERE/), then either restore them from a \
            backup, or accept the loss with hubscript runs repair --accept-loss (check on the Hub what runs of that time did).
            """)
    }

    /// A new journal's first runs, its log and its record deleted together before any
    /// checkpoint: the file knows from its creation where it is used, so it is not
    /// taken for a new journal.
    func testAFirstRunsLogDeletedWithTheRecordIsRefused() throws {
        try record(["run_a"])
        unlink(log)
        unlink(Journal.commitRecordPath(path))
        assertRefused("""
            the journal \(path): its commit record \(path)-commits is missing (the journal's history mark is 0), so \
            whether the journal lost committed history cannot be told. Nothing was run: a run it forgot would be started afresh \
            and not resumed. Keep a copy of its files (cp -p \(path)* SOMEWHERE/), then either restore them from a \
            backup, or accept the loss with hubscript runs repair --accept-loss (check on the Hub what runs of that time did).
            """)
    }

    /// A journal moved to another path is adopted there at once, in the file: its first
    /// runs there, their log deleted with the record, are not taken for a fresh copy's.
    func testAMovedJournalsLogDeletedWithTheRecordIsRefused() throws {
        try record(["run_a"])
        let moved = dir.appendingPathComponent("moved.sqlite").path
        for suffix in ["", "-wal"] { try FileManager.default.moveItem(atPath: path + suffix, toPath: moved + suffix) }
        do {
            let journal = try Journal.openChecked(path: moved)
            try journal.startRun(Fixture.runStart("run_b"), masking: SecretRedactor())
        }
        unlink(moved + "-wal")
        unlink(Journal.commitRecordPath(moved))
        XCTAssertThrowsError(try Journal.openChecked(path: moved)) { error in
            XCTAssertEqual((error as? JournalError)?.code, .historyLost, "\(error)")
            XCTAssertTrue("\(error)".contains("its commit record \(moved)-commits is missing"), "\(error)")
        }
    }

    func testADamagedRecordIsRefused() throws {
        try record(["run_a"])
        let recordPath = Journal.commitRecordPath(path)
        for (damage, reason) in [("", "empty"), ("garbage\n", "not a commit record")] {
            try Data(damage.utf8).write(to: URL(fileURLWithPath: recordPath))
            assertRefused("""
                the journal \(path): its commit record \(recordPath) is damaged (\(reason)), so whether the journal lost \
                committed history cannot be told. Nothing was run: a run it forgot would be started afresh and not \
                resumed. Keep a copy of its files (cp -p \(path)* SOMEWHERE/), then either restore them from a backup, \
                or accept the loss with hubscript runs repair --accept-loss (check on the Hub what runs of that time did).
                """)
        }
        unlink(recordPath)
        XCTAssertEqual(mkfifo(recordPath, 0o600), 0)
        XCTAssertThrowsError(try Journal.openChecked(path: path)) { error in
            XCTAssertTrue("\(error)".contains("commit record \(recordPath) is damaged (not a regular file)"), "\(error)")
        }
    }

    /// While a journal is opened for the first time, its record is missing or whole at
    /// every instant: a process opening it meanwhile, or after a kill, never finds it
    /// empty or half written (which would stop every run as a damaged record).
    func testANewRecordIsNeverSeenHalfMade() throws {
        let seen = FailureList()
        for round in 0..<150 {
            let folder = dir.appendingPathComponent("round-\(round)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let path = folder.appendingPathComponent("journal.sqlite").path
            let done = StopFlag()
            let group = DispatchGroup()
            DispatchQueue.global().async(group: group) {
                while !done.isSet {
                    if case .damaged(let reason) = JournalCommitLog.read(Journal.commitRecordPath(path)) {
                        seen.add("round \(round): \(reason)")
                        return
                    }
                }
            }
            _ = try Journal.openChecked(path: path)
            done.set()
            group.wait()
        }
        XCTAssertEqual(seen.all.first, nil, "\(seen.all.count) of 150 new journals showed a damaged record")
    }

    /// Repairing cannot make a record where a folder or a link stands: it says so and
    /// what to do, and follows no link.
    func testRepairRefusesARecordThatIsNotAFile() throws {
        try record(["run_a"])
        let recordPath = Journal.commitRecordPath(path)
        let target = dir.appendingPathComponent("elsewhere").path
        unlink(recordPath)
        XCTAssertEqual(mkdir(recordPath, 0o700), 0)
        XCTAssertThrowsError(try Journal.acceptLoss(path: path)) { error in
            XCTAssertEqual((error as? JournalError)?.message, """
                cannot open the journal's commit record \(recordPath): Is a directory; if it is not a file (a folder, a \
                link), move it aside and run again
                """)
        }
        rmdir(recordPath)
        XCTAssertEqual(symlink(target, recordPath), 0)
        XCTAssertThrowsError(try Journal.acceptLoss(path: path)) { error in
            XCTAssertEqual((error as? JournalError)?.message, """
                cannot open the journal's commit record \(recordPath): Too many levels of symbolic links; if it is not a \
                file (a folder, a link), move it aside and run again
                """)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: target), "the link was followed")
    }

    /// An older copy of the journal put back in place (a backup restored over newer
    /// history) holds fewer commits than recorded.
    func testAnOlderCopyPutBackIsRefused() throws {
        try record(["run_a"])
        let old = dir.appendingPathComponent("old").path
        try FileManager.default.createDirectory(atPath: old, withIntermediateDirectories: true)
        for suffix in ["", "-wal"] { try FileManager.default.copyItem(atPath: path + suffix, toPath: old + "/j" + suffix) }
        try record(["run_b"])
        for suffix in ["", "-wal"] {
            unlink(path + suffix)
            try FileManager.default.copyItem(atPath: old + "/j" + suffix, toPath: path + suffix)
        }
        unlink(path + "-shm")
        assertRefused(expectedLoss(recorded: 2, held: 1))
    }

    func testAnotherJournalPutInPlaceIsRefused() throws {
        try record(["run_a"])
        let other = dir.appendingPathComponent("other.sqlite").path
        do { _ = try Journal.openChecked(path: other).startRun(Fixture.runStart("run_x"), masking: SecretRedactor()) }
        for suffix in ["", "-wal"] {
            unlink(path + suffix)
            try FileManager.default.copyItem(atPath: other + suffix, toPath: path + suffix)
        }
        unlink(path + "-shm")
        XCTAssertThrowsError(try Journal.openChecked(path: path)) { error in
            XCTAssertTrue("\(error)".contains("it is not the journal this machine last wrote: its commit record \(path)-commits belongs to another journal file"), "\(error)")
        }
    }

    func testAcceptingTheLossKeepsTheLogAndOpensTheJournalAsItIs() throws {
        try record(["run_a"])
        try record(["run_b", "run_c"])
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: log))
        try handle.write(contentsOf: Data(repeating: 0, count: 32))
        try handle.close()
        let damaged = try Data(contentsOf: URL(fileURLWithPath: log))
        let accepted = try Journal.acceptLoss(path: path)
        XCTAssertEqual(accepted.recorded, 3)
        XCTAssertEqual(accepted.held, 0)
        let copy = try XCTUnwrap(accepted.logCopy)
        XCTAssertTrue(copy.hasPrefix(path + "-wal.lost-"), copy)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: copy)), damaged)
        do {
            let journal = try Journal.openChecked(path: path)
            XCTAssertEqual(try journal.listRuns(limit: 10).count, 0)
            try journal.startRun(Fixture.runStart("run_d"), masking: SecretRedactor())
        }
        XCTAssertEqual(try Journal.openChecked(path: path).listRuns(limit: 10).map(\.id), ["run_d"])

        // A second loss within the same second keeps its own copy.
        let again = try XCTUnwrap(FileHandle(forWritingAtPath: log))
        try again.write(contentsOf: Data(repeating: 0, count: 32))
        try again.close()
        let second = try Journal.acceptLoss(path: path)
        XCTAssertNotEqual(second.logCopy, accepted.logCopy)
        XCTAssertTrue(FileManager.default.fileExists(atPath: try XCTUnwrap(second.logCopy)))
    }

    /// A journal made before the record existed gets one at its next open, not an alarm.
    func testAJournalWithoutARecordGetsOne() throws {
        try record(["run_a"])
        do {
            let raw = try SQLiteDatabase(path: path)
            try raw.exec("DROP TABLE journal_commits")
        }
        unlink(Journal.commitRecordPath(path))
        try record(["run_b"])
        try record(["run_c"])
        unlink(log)
        XCTAssertThrowsError(try Journal.openChecked(path: path)) { error in
            XCTAssertEqual((error as? JournalError)?.code, .historyLost, "\(error)")
        }
    }

    /// A new journal made where an older one was moved aside starts a new record.
    func testAJournalMovedAsideLeavesNoRecordBehind() throws {
        try record(["run_a"])
        try FileManager.default.moveItem(atPath: path, toPath: path + ".aside")
        try record(["run_b"])
        XCTAssertEqual(try Journal.openChecked(path: path, check: .always).listRuns(limit: 10).map(\.id), ["run_b"])
    }

    /// The record is the owner's alone.
    func testTheRecordIsPrivate() throws {
        try record(["run_a"])
        var status = stat()
        XCTAssertEqual(stat(Journal.commitRecordPath(path), &status), 0)
        XCTAssertEqual(status.st_mode & 0o777, 0o600)
    }
}

final class FailureList: @unchecked Sendable {
    private let lock = NSLock()
    private var failures: [String] = []
    func add(_ f: String) { lock.withLock { failures.append(f) } }
    var all: [String] { lock.withLock { failures } }
}

/// A flag one thread sets and another polls.
final class StopFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}
