import Foundation
import SystemText
import XCTest
import JournalTestSupport
import PostgresKit
import TestSupport
import SQLiteKit
@testable import RunJournal

/// The run ids shell completion offers: most recent first, bounded, read without
/// writing anything, and none (never an error) from a journal that cannot be read.
final class RecentRunIDsTests: XCTestCase {
    final class Ticks: @unchecked Sendable {
        private let lock = NSLock()
        private var seconds = 0.0
        func next() -> Date { lock.withLock { seconds += 1; return Fixture.start.addingTimeInterval(seconds) } }
    }

    func testIDsComeMostRecentFirstAndBounded() throws {
        try eachJournalBackend { backend in
            let location = try backend.newLocation()
            let ticks = Ticks()
            let journal = try Journal(location, clock: { ticks.next() })
            for id in ["run_b", "run_a", "run_d", "run_c"] {
                try journal.startNewRun(Fixture.runStart(id), masking: SecretRedactor())
            }
            XCTAssertEqual(RecentRunIDs.read(location, limit: 50), ["run_c", "run_d", "run_a", "run_b"])
            XCTAssertEqual(RecentRunIDs.read(location, limit: 2), ["run_c", "run_d"])
            XCTAssertEqual(RecentRunIDs.read(location, limit: 0), [])
            XCTAssertEqual(RecentRunIDs.read(location, limit: -3), [])
        }
    }

    func testAMissingSQLiteJournalIsNotCreated() throws {
        let folder = try Fixture.tempDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("journal").appendingPathComponent("journal.sqlite").path
        XCTAssertEqual(RecentRunIDs.read(.sqlite(path: path), limit: 50), [])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), [])
    }

    /// A journal without its write-ahead log and index beside it is read as it is, and
    /// they are not made (a read-only connection would make them), whatever the path.
    func testNoFileIsMadeBesideAJournalWithoutItsLog() throws {
        let folder = try Fixture.tempDirectory().appendingPathComponent("odd ?#%25 name")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        let path = folder.appendingPathComponent("journal.sqlite").path
        do {
            let db = try SQLiteDatabase(path: path)
            try db.enableWAL()   // closed last, it leaves no log and no index
            try db.exec("CREATE TABLE runs (id TEXT PRIMARY KEY, started_at INTEGER NOT NULL)")
            try db.exec("INSERT INTO runs VALUES ('run_old', 1), ('run_new', 2)")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), ["journal.sqlite"])
        XCTAssertEqual(RecentRunIDs.read(.sqlite(path: path), limit: 50), ["run_new", "run_old"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), ["journal.sqlite"])
    }

    func testAnUnreadableJournalGivesNoIDs() throws {
        let folder = try Fixture.tempDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let garbage = folder.appendingPathComponent("garbage.sqlite")
        try Data(repeating: 0x41, count: 8192).write(to: garbage)
        XCTAssertEqual(RecentRunIDs.read(.sqlite(path: garbage.path), limit: 50), [])
        XCTAssertEqual(try Data(contentsOf: garbage), Data(repeating: 0x41, count: 8192), "left as it was")
        let empty = folder.appendingPathComponent("empty.sqlite")
        XCTAssertTrue(FileManager.default.createFile(atPath: empty.path, contents: Data()))
        XCTAssertEqual(RecentRunIDs.read(.sqlite(path: empty.path), limit: 50), [], "no runs table")
        XCTAssertEqual(try Data(contentsOf: empty), Data(), "no schema was made")
        XCTAssertEqual(RecentRunIDs.read(.sqlite(path: folder.path), limit: 50), [], "a folder")
        let unreachable = try PostgresURL("postgresql://nobody@127.0.0.1:1/none")
        XCTAssertEqual(RecentRunIDs.read(.postgres(unreachable), limit: 50, connectTimeoutSeconds: 1), [])
    }

    /// The PostgreSQL session is read-only: a journal whose schema has no runs table is
    /// not given one.
    func testAPostgreSQLSchemaWithoutAJournalIsLeftEmpty() throws {
        guard let base = try TestPostgres.baseURL(required: false) else { throw XCTSkip("no HUBSCRIPT_TEST_POSTGRES") }
        let url = try TestPostgres.freshSchema(base)
        XCTAssertEqual(RecentRunIDs.read(.postgres(url), limit: 50), [])
        let connection = try PostgresConnection(url: url)
        let tables = try connection.first("SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()") { $0.int(0) }
        XCTAssertEqual(tables, 0)
    }
}
