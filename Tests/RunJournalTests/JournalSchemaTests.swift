import Foundation
import PostgresKit
import SQLiteKit
import TestSupport
import XCTest
import JournalTestSupport
@testable import RunJournal

/// The journal's tables are described once (`JournalSchema.migrations(for:)`) and come
/// out the same on SQLite and PostgreSQL: the same tables, the same columns in the same
/// order, the same integers, texts and NOT NULLs, and bytewise-sorted keys.
final class JournalSchemaTests: XCTestCase {
    struct Column: Equatable, CustomStringConvertible {
        var table, name, type: String
        var notNull: Bool
        var description: String { "\(table).\(name) \(type)\(notNull ? " NOT NULL" : "")" }
    }

    /// The key columns: compared bytewise on both (`COLLATE "C"` on PostgreSQL).
    static let keyColumns = ["fires.job", "fires.run_id", "journal_meta.name", "plan_decisions.person", "plan_decisions.plan_id", "plans.id", "pruning.run_id", "reads.key", "reads.run_id", "run_output.run_id", "runs.id", "state.key", "state.scope",
                             "trigger_events.event_id", "trigger_events.trigger", "writes.key", "writes.run_id"]

    func sqliteColumns() throws -> [Column] {
        let folder = try Fixture.tempDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent(Journal.fileName).path
        _ = try Journal(path: path)
        let raw = try SQLiteDatabase(path: path)
        var tables: [String] = []
        try raw.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name") {
            tables.append($0.text(0))
        }
        var columns: [Column] = []
        for table in tables {
            try raw.query("PRAGMA table_info(\(table))") { row in
                // A primary key is NOT NULL on PostgreSQL whatever it says; SQLite's
                // `INTEGER PRIMARY KEY` is the row id, never NULL either.
                columns.append(Column(table: table, name: row.text(1), type: row.text(2).lowercased(),
                                      notNull: row.bool(3) || row.int(5) > 0))
            }
        }
        return columns
    }

    func postgresColumns() throws -> (columns: [Column], collatedC: [String]) {
        let url = try TestPostgres.freshSchema(TestPostgres.requiredBaseURL())
        _ = try Journal(postgres: url)
        let raw = try PostgresConnection(url: url)
        defer { raw.close() }
        var columns: [Column] = []
        var collated: [String] = []
        try raw.query("""
            SELECT table_name, column_name, data_type, is_nullable, collation_name FROM information_schema.columns
            WHERE table_schema = current_schema() AND table_name <> 'journal_schema' ORDER BY table_name, ordinal_position
            """) { row in
            let type = row.text(2) == "bigint" ? "integer" : row.text(2)
            columns.append(Column(table: row.text(0), name: row.text(1), type: type, notNull: row.text(3) == "NO"))
            if row.textOrNil(4) == "C" { collated.append(row.text(0) + "." + row.text(1)) }
        }
        return (columns, collated.sorted())
    }

    func testBothDatabasesHaveTheSameTablesAndColumns() throws {
        let sqlite = try sqliteColumns()
        XCTAssertEqual(Set(sqlite.map(\.table)), ["fires", "journal_meta", "plan_decisions", "plans", "pruning", "reads", "run_output", "runs", "state", "trigger_events", "writes"])
        XCTAssertEqual(Set(sqlite.map(\.type)), ["integer", "text"])
        let postgres = try postgresColumns()
        XCTAssertEqual(postgres.columns.map(\.description), sqlite.map(\.description))
        XCTAssertEqual(postgres.collatedC, Self.keyColumns)
    }

    func testTheDialectsDifferOnlyInTheirTypes() {
        let sqlite = JournalSchema.migrations(for: .sqlite)
        let postgres = JournalSchema.migrations(for: .postgres)
        XCTAssertEqual(sqlite.count, Int(JournalSchema.version))
        XCTAssertEqual(postgres.count, sqlite.count)
        for (s, p) in zip(sqlite, postgres) {
            let unified = p.replacingOccurrences(of: "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY", with: "INTEGER PRIMARY KEY AUTOINCREMENT")
                .replacingOccurrences(of: "BIGINT", with: "INTEGER")
                .replacingOccurrences(of: #"TEXT COLLATE "C""#, with: "TEXT")
            XCTAssertEqual(unified, s)
            XCTAssertFalse(s.contains("BIGINT") || s.contains("COLLATE"), s)
        }
    }
}
