import Foundation
import SQLiteKit
import SystemText
import XCTest
import JournalTestSupport
@testable import RunJournal

/// The log a clean close keeps beside the journal (`markClosedCleanly`): what users (and
/// hubscript's own messages) do with "the journal file" must not lose or resurrect runs,
/// since the file alone does not hold them.
final class JournalLogDamageTests: XCTestCase {
    var dir: URL!
    var path: String { dir.appendingPathComponent("journal.sqlite").path }

    override func setUpWithError() throws { dir = try Fixture.tempDirectory() }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: dir) }

    func exists(_ file: String) -> Bool { FileManager.default.fileExists(atPath: file) }

    /// The damaged-journal message says `mv journal.sqlite journal.sqlite.damaged` and run
    /// again "to start a new journal". The old log (and index, marker) stay behind under
    /// the journal's name: the new journal must not read the old journal's log.
    func testMovingTheJournalAsideAsTheMessageSaysStartsAnEmptyJournal() throws {
        do {
            let journal = try Journal.openChecked(path: path)
            for n in 0..<3 { try journal.startRun(Fixture.runStart("run_old_\(n)"), masking: SecretRedactor()) }
        }
        XCTAssertGreaterThan((try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0, 0)
        XCTAssertEqual(rename(path, path + ".damaged"), 0)   // as Journal.malformed's message says
        let fresh: Journal
        do { fresh = try Journal.openChecked(path: path) } catch {
            return XCTFail("a new journal after the move: \(error)")
        }
        XCTAssertEqual(try fresh.listRuns(limit: 100).map(\.id), [], "the new journal holds the old journal's runs")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path)
        XCTAssertEqual(names.filter { $0.hasPrefix("journal.sqlite-wal.orphaned-") }.count, 1, "the old log is kept aside: \(names)")
    }

    /// Many processes making the journal at once (first runs on a fresh state folder)
    /// end up sharing one journal: none moves aside a log another's journal writes.
    func testJournalsCreatedAtOnceAreOneJournal() throws {
        let path = self.path
        let errors = CreationErrors()
        DispatchQueue.concurrentPerform(iterations: 8) { n in
            do { try Journal.openChecked(path: path).startRun(Fixture.runStart("run_at_once_\(n)"), masking: SecretRedactor()) } catch {
                errors.append("\(error)")
            }
        }
        XCTAssertEqual(errors.all, [])
        let journal = try Journal.openChecked(path: path, check: .always)
        XCTAssertEqual(Set(try journal.listRuns(limit: 100).map(\.id)), Set((0..<8).map { "run_at_once_\($0)" }))
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path)
        XCTAssertEqual(names.filter { $0.contains("orphaned") || $0.contains(".new-") }, [])
    }

    /// The log's index (`-shm`) left at a clean close is only a cache: garbage in it,
    /// or none at all, and the next open still reads every run from the log.
    func testADamagedOrMissingIndexLosesNoRun() throws {
        do { try Journal.openChecked(path: path).startRun(Fixture.runStart("run_indexed"), masking: SecretRedactor()) }
        let index = path + "-shm"
        XCTAssertTrue(exists(index))
        try Data((0..<32768).map { UInt8(truncatingIfNeeded: $0 &* 37) }).write(to: URL(fileURLWithPath: index))
        XCTAssertNotNil(try Journal.openChecked(path: path).run(id: "run_indexed"))
        XCTAssertEqual(unlink(index), 0)
        XCTAssertNotNil(try Journal.openChecked(path: path).run(id: "run_indexed"))
        XCTAssertNotNil(try Journal.openChecked(path: path, check: .always).run(id: "run_indexed"))
    }

    /// A damaged journal that a listing opened without a check (`runs list`) and closed
    /// is still checked, and refused, by the next run: a close only vouches for a
    /// journal its process checked (or made).
    func testAListingDoesNotVouchForADamagedJournal() throws {
        do {
            let journal = try Journal.openChecked(path: path)
            for n in 0..<200 { try journal.startRun(Fixture.runStart("run_\(n)"), masking: SecretRedactor()) }   // checkpointed at close
        }
        var data = try Data(contentsOf: URL(fileURLWithPath: path))
        XCTAssertGreaterThan(data.count, 8192)
        for i in 4096..<data.count { data[i] = UInt8(truncatingIfNeeded: i &* 31) }
        try data.write(to: URL(fileURLWithPath: path))
        XCTAssertFalse(Journal.closedCleanly(path))
        _ = try? Journal.openChecked(path: path, check: .skip).listRuns(limit: 5)   // runs list
        XCTAssertThrowsError(try Journal.openChecked(path: path)) { error in
            XCTAssertTrue("\(error)".contains("is damaged (SQLite: "), "\(error)")
        }
    }

    /// A journal refused as damaged is refused again by the next run: the refusal's
    /// close leaves no marker that would let the next open skip the check.
    func testADamagedJournalIsRefusedEveryTime() throws {
        do {
            let journal = try Journal.openChecked(path: path)
            for n in 0..<200 { try journal.startRun(Fixture.runStart("run_\(n)"), masking: SecretRedactor()) }
        }
        var data = try Data(contentsOf: URL(fileURLWithPath: path))
        for i in 4096..<data.count { data[i] = UInt8(truncatingIfNeeded: i &* 31) }
        try data.write(to: URL(fileURLWithPath: path))
        for attempt in 1...2 {
            XCTAssertThrowsError(try Journal.openChecked(path: path), "attempt \(attempt)") { error in
                XCTAssertTrue("\(error)".contains("is damaged (SQLite: "), "attempt \(attempt): \(error)")
            }
        }
    }

    /// A journal whose file holds more than its log (a long log was checkpointed at an
    /// earlier close): after the move the message asks for, the left-behind log laid
    /// over a new, smaller file must not make the new journal unusable ("damaged"
    /// again, so following the message never gets the user a working journal).
    func testFollowingTheDamagedMessageGivesAWorkingJournal() throws {
        do {
            let journal = try Journal.openChecked(path: path)
            for n in 0..<200 { try journal.startRun(Fixture.runStart("run_big_\(n)"), masking: SecretRedactor()) }   // checkpointed at close
        }
        do { try Journal.openChecked(path: path).startRun(Fixture.runStart("run_in_log"), masking: SecretRedactor()) }   // kept in the log
        XCTAssertEqual(rename(path, path + ".damaged"), 0)
        do {
            let fresh = try Journal.openChecked(path: path)
            XCTAssertEqual(try fresh.listRuns(limit: 1000).map(\.id), [])
            try fresh.startRun(Fixture.runStart("run_new"), masking: SecretRedactor())
        } catch {
            XCTFail("the new journal made after the move: \(error)")
        }
        let reopened = try Journal.openChecked(path: path, check: .always)
        XCTAssertEqual(try reopened.listRuns(limit: 1000).map(\.id), ["run_new"])
    }

    /// Same for the 0-byte message (`mv journal.sqlite journal.sqlite.empty`): the file was
    /// emptied but its log survived; the journal made next must start empty, not with
    /// the old log's pages laid over it.
    func testMovingAnEmptiedJournalAsideStartsAnEmptyJournal() throws {
        do {
            let journal = try Journal.openChecked(path: path)
            for n in 0..<3 { try journal.startRun(Fixture.runStart("run_old_\(n)"), masking: SecretRedactor()) }
        }
        XCTAssertEqual(truncate(path, 0), 0)
        XCTAssertThrowsError(try Journal.openChecked(path: path)) { error in
            XCTAssertEqual(error as? JournalError, JournalError(.corrupt, """
                the journal \(path) is empty (0 bytes): it was truncated or replaced, and the runs it recorded are \
                lost. Move it aside (mv \(path) \(path).empty) and run again to start a new journal.
                """))
        }
        XCTAssertEqual(rename(path, path + ".empty"), 0)
        let fresh: Journal
        do { fresh = try Journal.openChecked(path: path) } catch {
            return XCTFail("a new journal after the move: \(error)")
        }
        XCTAssertEqual(try fresh.listRuns(limit: 100).map(\.id), [], "the new journal holds the old journal's runs")
    }

    /// The journal is its file and its write-ahead log (a clean close keeps a short log:
    /// README, "Several hosts"): moved aside together, the runs go with them.
    func testAJournalMovedAsideWithItsLogKeepsItsRuns() throws {
        do { try Journal.openChecked(path: path).startRun(Fixture.runStart("run_kept"), masking: SecretRedactor()) }
        XCTAssertEqual(rename(path, path + ".damaged"), 0)
        XCTAssertEqual(rename(path + "-wal", path + ".damaged-wal"), 0)
        let moved = try Journal.openChecked(path: path + ".damaged", check: .always)
        XCTAssertNotNil(try moved.run(id: "run_kept"))
    }

    /// A cleanly closed journal copied with its log (a backup) holds every run recorded
    /// before the close; the file alone may lack the latest (they are in the log).
    func testACopyOfACleanlyClosedJournalWithItsLogHoldsItsRuns() throws {
        do { try Journal.openChecked(path: path).startRun(Fixture.runStart("run_backed_up"), masking: SecretRedactor()) }
        let copy = dir.appendingPathComponent("backup.sqlite").path
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
        let restored = try Journal.openChecked(path: copy, check: .always)
        XCTAssertNotNil(try restored.run(id: "run_backed_up"))
    }
}

private final class CreationErrors: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func append(_ entry: String) { lock.withLock { list.append(entry) } }
    var all: [String] { lock.withLock { list } }
}
