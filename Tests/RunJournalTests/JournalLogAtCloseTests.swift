import Foundation
import SQLiteKit
import SystemText
import XCTest
import JournalTestSupport
@testable import RunJournal

/// A clean close leaves a short write-ahead log in place (no checkpoint, no fsync) and
/// a marker that covers the file and its log; the next open trusts exactly that state.
final class JournalLogAtCloseTests: XCTestCase {
    var dir: URL!
    var path: String { dir.appendingPathComponent("journal.sqlite").path }

    override func setUpWithError() throws { dir = try Fixture.tempDirectory() }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: dir) }

    func size(_ file: String) -> Int {
        var s = stat()
        return stat(file, &s) == 0 ? Int(s.st_size) : -1
    }

    func testAShortLogIsLeftInPlaceAndItsRunsAreReadBack() throws {
        do { _ = try Journal.openChecked(path: path).startRun(Fixture.runStart("run_kept"), masking: SecretRedactor()) }
        XCTAssertGreaterThan(size(path + "-wal"), 0, "the run is in the log, not checkpointed into the file")
        XCTAssertLessThanOrEqual(size(path + "-wal"), Journal.logKeptAtClose)
        XCTAssertTrue(Journal.closedCleanly(path))
        let marker = try String(contentsOfFile: path + "-closed", encoding: .utf8)
        XCTAssertEqual(marker.split(separator: "\n").count, 2, "the file's stamp and the log's: \(marker)")

        // Read back by the next open (which rebuilds the log's index), without a check.
        let reopened = try Journal.openChecked(path: path)
        XCTAssertEqual(try reopened.run(id: "run_kept")?.status, .running)
        // And by a plain SQLite connection, as any other tool would read it.
        let raw = try SQLiteDatabase(path: path)
        XCTAssertEqual(try raw.first("SELECT count(*) FROM runs WHERE id = 'run_kept'", [], { $0.int(0) }), 1)
    }

    func testALongLogIsCheckpointedIntoTheFileAtClose() throws {
        do {
            let journal = try Journal.openChecked(path: path)
            for n in 0..<200 { try journal.startRun(Fixture.runStart("run_\(n)"), masking: SecretRedactor()) }
            XCTAssertGreaterThan(size(path + "-wal"), Journal.logKeptAtClose)
        }
        XCTAssertEqual(size(path + "-wal"), 0, "checkpointed and emptied")
        XCTAssertTrue(Journal.closedCleanly(path))
        XCTAssertEqual(try Journal.openChecked(path: path, check: .always).listRuns(limit: 1000).count, 200)
    }

    func testALogWrittenAfterACleanCloseMakesTheNextOpenCheck() throws {
        do { _ = try Journal.openChecked(path: path).startRun(Fixture.runStart("run_a"), masking: SecretRedactor()) }
        XCTAssertTrue(Journal.closedCleanly(path))
        // Another connection appends to the log (as a process killed mid-run would).
        let other = try SQLiteDatabase(path: path)
        try other.exec("PRAGMA journal_mode=WAL; UPDATE runs SET reads = reads + 1")
        XCTAssertFalse(Journal.closedCleanly(path))
    }

    /// A log damaged after a clean close no longer matches the marker, and SQLite drops
    /// the frames whose checksums fail: the journal would open as it was before the run,
    /// so it is refused as having lost history (`JournalHistoryTests`).
    func testADamagedLogAfterACleanCloseIsRefusedAsLostHistory() throws {
        do { _ = try Journal.openChecked(path: path).startRun(Fixture.runStart("run_a"), masking: SecretRedactor()) }
        let log = path + "-wal"
        var bytes = try Data(contentsOf: URL(fileURLWithPath: log))
        XCTAssertGreaterThan(bytes.count, 4096)
        for i in 32..<bytes.count { bytes[i] = UInt8(truncatingIfNeeded: i &* 131) }
        try bytes.write(to: URL(fileURLWithPath: log))
        XCTAssertFalse(Journal.closedCleanly(path), "the log's stamp no longer matches")
        XCTAssertThrowsError(try Journal.openChecked(path: path)) { error in
            XCTAssertEqual((error as? JournalError)?.code, .historyLost, "\(error)")
        }
    }

    func testAZeroByteFileIsRefusedEvenWithALogBesideIt() throws {
        do { _ = try Journal.openChecked(path: path).startRun(Fixture.runStart("run_a"), masking: SecretRedactor()) }
        XCTAssertGreaterThan(size(path + "-wal"), 0)
        try Data().write(to: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try Journal.openChecked(path: path)) { error in
            XCTAssertTrue("\(error)".contains("is empty (0 bytes): it was truncated or replaced"), "\(error)")
        }
    }

    /// A FIFO (or a link to a device) planted as the marker is not a marker: the open
    /// neither blocks on it nor reads it without end, and the journal is checked.
    func testAMarkerThatIsNotARegularFileIsNotTrusted() throws {
        do { _ = try Journal.openChecked(path: path).startRun(Fixture.runStart("run_a"), masking: SecretRedactor()) }
        let marker = path + "-closed"
        unlink(marker)
        XCTAssertEqual(mkfifo(marker, 0o600), 0)
        XCTAssertFalse(Journal.closedCleanly(path))
        unlink(marker)
        XCTAssertEqual(symlink("/dev/zero", marker), 0)
        XCTAssertFalse(Journal.closedCleanly(path))
        unlink(marker)
    }

    func testATornMarkerOnlyCostsACheck() throws {
        do { _ = try Journal.openChecked(path: path).startRun(Fixture.runStart("run_a"), masking: SecretRedactor()) }
        let marker = path + "-closed"
        let text = try String(contentsOfFile: marker, encoding: .utf8)
        try String(text.prefix(text.count / 2)).write(toFile: marker, atomically: false, encoding: .utf8)
        XCTAssertFalse(Journal.closedCleanly(path))
        XCTAssertEqual(try Journal.openChecked(path: path).run(id: "run_a")?.status, .running)
        XCTAssertTrue(Journal.closedCleanly(path), "rewritten whole at the close")
    }
}

/// The SQLite connection's settings, set through the C API rather than parsed pragmas.
final class JournalConnectionSettingsTests: XCTestCase {
    func testForeignKeysAreEnforcedAndTheVersionIsReadWithoutAWriteLock() throws {
        let dir = try Fixture.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("journal.sqlite").path
        _ = try Journal.openChecked(path: path)
        // Another connection holds the write lock: opening an up-to-date journal must not wait for it.
        let writer = try SQLiteDatabase(path: path)
        try writer.exec("BEGIN IMMEDIATE")
        let started = Date()
        let journal = try Journal(path: path, busyTimeout: 5_000)
        XCTAssertLessThan(Date().timeIntervalSince(started), 1, "the open waited for the writer")
        try writer.exec("ROLLBACK")
        var enforced = 0
        try journal.sqlite?.query("PRAGMA foreign_keys") { enforced = $0.int(0) }
        XCTAssertEqual(enforced, 1)
    }
}
