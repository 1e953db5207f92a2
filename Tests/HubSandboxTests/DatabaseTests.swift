import SQLiteKit
import XCTest
@testable import HubSandbox

/// The SQLite wrapper (SQLiteKit, shared with the journal): prepared statements are
/// cached by SQL text, a nested use of the same text gets its own, and transactions
/// (whose BEGIN/COMMIT/ROLLBACK are cached statements too) commit or roll back cleanly
/// however often they run.
final class DatabaseTests: XCTestCase {
    struct Boom: Error {}

    func testStatementsAreCachedBySQLText() throws {
        let db = try SQLiteDatabase.sandboxStore(path: ":memory:")
        try db.exec("CREATE TABLE t(x INTEGER)")
        let before = db.cachedStatementCount
        for i in 0..<50 { try db.run("INSERT INTO t(x) VALUES (?)", [.int(i)]) }
        XCTAssertEqual(db.cachedStatementCount, before + 1)
        for _ in 0..<3 { _ = try db.first("SELECT count(*) FROM t") { $0.int(0) } }
        XCTAssertEqual(db.cachedStatementCount, before + 2)
        XCTAssertEqual(try db.first("SELECT count(*) FROM t") { $0.int(0) }, 50)
        // A statement is reset and rebound on every use.
        XCTAssertEqual(try db.first("SELECT x FROM t WHERE x = ?", [.int(7)]) { $0.int(0) }, 7)
        XCTAssertEqual(try db.first("SELECT x FROM t WHERE x = ?", [.int(9)]) { $0.int(0) }, 9)
        XCTAssertNil(try db.first("SELECT x FROM t WHERE x = ?", [.int(99)]) { $0.int(0) })
    }

    func testTransactionsCommitAndRollBackRepeatedly() throws {
        let db = try SQLiteDatabase.sandboxStore(path: ":memory:")
        try db.exec("CREATE TABLE t(x INTEGER)")
        for round in 0..<20 {
            _ = try db.transaction { try db.run("INSERT INTO t(x) VALUES (?)", [.int(round)]) }
            XCTAssertThrowsError(_ = try db.transaction {
                try db.run("INSERT INTO t(x) VALUES (?)", [.int(-1)])
                throw Boom()
            }) { XCTAssertTrue($0 is Boom, "the body's own error passes through: \($0)") }
        }
        XCTAssertEqual(try db.first("SELECT count(*), min(x) FROM t") { [$0.int(0), $0.int(1)] }, [20, 0])
        let cached = db.cachedStatementCount
        _ = try db.transaction { try db.run("INSERT INTO t(x) VALUES (?)", [.int(100)]) }
        XCTAssertEqual(db.cachedStatementCount, cached)
        // A failing statement inside rolls back too, and the next transaction starts cleanly.
        XCTAssertThrowsError(_ = try db.transaction { try db.run("INSERT INTO nope VALUES (1)") }) { error in
            XCTAssertEqual((error as? SQLiteError)?.code, 1, "\(error)")
            XCTAssertEqual((error as? SQLiteError)?.message, "no such table: nope")
        }
        _ = try db.transaction { try db.run("INSERT INTO t(x) VALUES (?)", [.int(101)]) }
        XCTAssertEqual(try db.first("SELECT count(*) FROM t") { $0.int(0) }, 22)
    }

    /// A query inside another query's row callback, with the same SQL text, prepares its
    /// own statement instead of resetting the outer one (the journal relies on it).
    func testNestedQueryOfTheSameTextKeepsTheOuterOne() throws {
        let db = try SQLiteDatabase.sandboxStore(path: ":memory:")
        try db.exec("CREATE TABLE t(x INTEGER, s TEXT)")
        for i in 1...3 { try db.run("INSERT INTO t(x, s) VALUES (?, ?)", [.int(i), i == 2 ? .null : .text("v\(i)")]) }
        var pairs: [String] = []
        try db.query("SELECT x FROM t ORDER BY x") { outer in
            let x = outer.int(0)
            try db.query("SELECT x FROM t ORDER BY x") { inner in pairs.append("\(x)-\(inner.int(0))") }
        }
        XCTAssertEqual(pairs, ["1-1", "1-2", "1-3", "2-1", "2-2", "2-3", "3-1", "3-2", "3-3"])
        XCTAssertEqual(try db.first("SELECT s FROM t WHERE x = 2") { $0.textOrNil(0) }, .some(nil))
        XCTAssertEqual(try db.first("SELECT s FROM t WHERE x = 2") { $0.text(0) }, "")
        XCTAssertEqual(try db.first("SELECT s FROM t WHERE x = 3") { $0.textOrNil(0) }, "v3")
        XCTAssertThrowsError(try db.run("INSERT INTO nope VALUES (1)")) { error in
            XCTAssertEqual("\(error)", "SQLite error 1 on :memory:: no such table: nope (in: INSERT INTO nope VALUES (1))")
        }
    }
}
