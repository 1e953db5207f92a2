import XCTest
@testable import HubSandbox

/// The SQLite wrapper: prepared statements are cached by SQL text, and transactions
/// (whose BEGIN/COMMIT/ROLLBACK are cached statements too) commit or roll back cleanly
/// however often they run.
final class DatabaseTests: XCTestCase {
    struct Boom: Error {}

    func testStatementsAreCachedBySQLText() throws {
        let db = try Database(path: ":memory:")
        try db.exec("CREATE TABLE t(x INTEGER)")
        let before = db.cachedStatementCount
        for i in 0..<50 { try db.run("INSERT INTO t(x) VALUES (?)", [.int(i)]) }
        XCTAssertEqual(db.cachedStatementCount, before + 1)
        XCTAssertTrue(try db.statement("SELECT count(*) FROM t", []) === db.statement("SELECT count(*) FROM t", []))
        XCTAssertEqual(try db.first("SELECT count(*) FROM t") { $0.int(0) }, 50)
        // A statement is reset and rebound on every use.
        XCTAssertEqual(try db.first("SELECT x FROM t WHERE x = ?", [.int(7)]) { $0.int(0) }, 7)
        XCTAssertEqual(try db.first("SELECT x FROM t WHERE x = ?", [.int(9)]) { $0.int(0) }, 9)
        XCTAssertNil(try db.first("SELECT x FROM t WHERE x = ?", [.int(99)]) { $0.int(0) })
    }

    func testTransactionsCommitAndRollBackRepeatedly() throws {
        let db = try Database(path: ":memory:")
        try db.exec("CREATE TABLE t(x INTEGER)")
        for round in 0..<20 {
            _ = try db.transaction { try db.run("INSERT INTO t(x) VALUES (?)", [.int(round)]) }
            XCTAssertThrowsError(_ = try db.transaction {
                try db.run("INSERT INTO t(x) VALUES (?)", [.int(-1)])
                throw Boom()
            })
        }
        XCTAssertEqual(try db.first("SELECT count(*), min(x) FROM t") { [$0.int(0), $0.int(1)] }, [20, 0])
        let cached = db.cachedStatementCount
        _ = try db.transaction { try db.run("INSERT INTO t(x) VALUES (?)", [.int(100)]) }
        XCTAssertEqual(db.cachedStatementCount, cached)
        // A failing statement inside rolls back too, and the next transaction starts cleanly.
        XCTAssertThrowsError(_ = try db.transaction { try db.run("INSERT INTO nope VALUES (1)") })
        _ = try db.transaction { try db.run("INSERT INTO t(x) VALUES (?)", [.int(101)]) }
        XCTAssertEqual(try db.first("SELECT count(*) FROM t") { $0.int(0) }, 22)
    }
}
