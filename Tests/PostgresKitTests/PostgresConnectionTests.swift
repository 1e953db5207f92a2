import Foundation
import TestSupport
import XCTest
@testable import PostgresKit

/// PostgresKit against the real server of `HUBSCRIPT_TEST_POSTGRES` (scripts/test).
final class PostgresConnectionTests: XCTestCase {
    func testParametersAreBoundAndRowsTyped() throws {
        let db = try PostgresConnection(url: PostgresURL(try TestPostgres.requiredBaseURL()))
        try db.exec("CREATE TEMPORARY TABLE t (id BIGINT PRIMARY KEY, name TEXT, note TEXT)")
        XCTAssertEqual(try db.run("INSERT INTO t VALUES ($1, $2, $3), ($4, $5, $6)",
                                  [.int(1), .text("it's; DROP TABLE t; --"), .null, .int(Int.max), .text("é\u{1F600}"), .text("")]), 2)
        var rows: [String] = []
        try db.query("SELECT id, name, note FROM t ORDER BY id", []) { row in
            rows.append("\(row.int(0))|\(row.text(1))|\(row.textOrNil(2) ?? "NULL")|\(row.isNull(2))")
        }
        XCTAssertEqual(rows, ["1|it's; DROP TABLE t; --|NULL|true", "\(Int.max)|é\u{1F600}||false"])
        XCTAssertEqual(try db.first("SELECT sum(id) FROM t WHERE id = $1", [.int(1)]) { $0.intOrNil(0) }, 1)
        XCTAssertEqual(try db.first("SELECT 1 WHERE false", []) { $0.int(0) }, nil)
        XCTAssertEqual(try db.first("SELECT true", []) { $0.bool(0) }, true)
    }

    func testATransactionRollsBackWhenItsBodyThrowsAndErrorsCarrySQLSTATE() throws {
        let db = try PostgresConnection(url: PostgresURL(try TestPostgres.requiredBaseURL()))
        try db.exec("CREATE TEMPORARY TABLE u (k TEXT PRIMARY KEY)")
        struct Stop: Error {}
        XCTAssertThrowsError(try db.transaction {
            try db.run("INSERT INTO u VALUES ($1)", [.text("a")])
            throw Stop()
        }) { XCTAssertTrue($0 is Stop, "the body's own error passes through: \($0)") }
        XCTAssertEqual(try db.first("SELECT count(*) FROM u", []) { $0.int(0) }, 0)
        try db.run("INSERT INTO u VALUES ($1)", [.text("a")])
        XCTAssertThrowsError(try db.run("INSERT INTO u VALUES ($1)", [.text("a")])) { error in
            let e = error as? PostgresError
            XCTAssertEqual(e?.kind, .statement)
            XCTAssertEqual(e?.sqlState, "23505")
            XCTAssertEqual(e?.isConnectionLost, false)
            XCTAssertTrue(e?.message.hasPrefix("ERROR:  duplicate key value violates unique constraint") ?? false, "\(error)")
        }
        XCTAssertThrowsError(try db.run("SELEC 1", [])) { error in
            XCTAssertEqual((error as? PostgresError)?.sqlState, "42601")
        }
    }

    func testAWrongPasswordIsRefusedWithoutShowingIt() throws {
        let socket = try TestPostgres.socketFolder()
        let url = try PostgresURL("postgresql://hubscript_pw:not-the-password@/hubscript?host=\(socket)")
        XCTAssertThrowsError(try PostgresConnection(url: url)) { error in
            let e = error as? PostgresError
            XCTAssertEqual(e?.kind, .connection)
            XCTAssertEqual(e?.isConnectionLost, true)
            let text = "\(error)"
            XCTAssertFalse(text.contains("not-the-password"), text)
            XCTAssertTrue(text.hasPrefix("cannot connect to postgresql://hubscript_pw:***@/hubscript?host=\(socket): "), text)
            XCTAssertTrue(text.contains("password authentication failed for user \"hubscript_pw\""), text)
        }
        // The right one is accepted (the same role, the same server).
        let right = try PostgresConnection(url: PostgresURL("postgresql://hubscript_pw:right-password@/hubscript?host=\(socket)"))
        XCTAssertEqual(try right.first("SELECT current_user", []) { $0.text(0) }, "hubscript_pw")
    }

    func testNoServerIsAClearConnectionError() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("no-pg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try PostgresURL("postgresql://ops:hunter2@/hubscript?host=\(folder.path)&connect_timeout=2")
        XCTAssertThrowsError(try PostgresConnection(url: url)) { error in
            let text = "\(error)"
            XCTAssertEqual((error as? PostgresError)?.kind, .connection)
            XCTAssertFalse(text.contains("hunter2"), text)
            XCTAssertTrue(text.contains("cannot connect to postgresql://ops:***@/hubscript?host=\(folder.path)&connect_timeout=2: connection to server on socket \"\(folder.path)/.s.PGSQL.5432\" failed: No such file or directory; Is the server running locally"), text)
            XCTAssertTrue(text.contains("No such file or directory"), text)
        }
    }

    /// libpq quotes what it cannot parse; the password is masked there too.
    func testAMalformedURLNeverEchoesThePassword() throws {
        let url = try PostgresURL("postgresql://ops:pa%zzss@db/x")
        XCTAssertThrowsError(try PostgresConnection(url: url)) { error in
            let text = "\(error)"
            XCTAssertFalse(text.contains("pa%zzss"), text)
            XCTAssertTrue(text.contains("***"), text)
        }
    }
}
