import SQLiteKit

/// One row handed to a `JournalDatabase` callback (valid only there). Columns are 0-based.
protocol JournalRow {
    func int(_ i: Int32) -> Int
    func intOrNil(_ i: Int32) -> Int?
    func text(_ i: Int32) -> String
    func textOrNil(_ i: Int32) -> String?
}

/// Where the SQL the journal writes differs between its two databases.
enum JournalDialect: Sendable {
    case sqlite, postgres

    /// The scalar greatest-of function (SQLite's two-argument `max`).
    var greatest: String {
        switch self {
        case .sqlite: "max"
        case .postgres: "greatest"
        }
    }
}

/// The SQL executor the journal runs on: SQLite (`SQLiteJournalDatabase`, the default)
/// or PostgreSQL (`PostgresJournalDatabase`, shared by several hosts). The journal's
/// logic — every statement, transaction and check — is written once, over this.
///
/// Contracts:
/// - Statements use `?1…?n` placeholders; values are bound, never spliced in.
///   Everything else in the journal's SQL is common to both (upserts with
///   `ON CONFLICT`, `RETURNING`, `true`), except what `dialect` names.
/// - `writeTransaction` is the single-writer transaction the journal relies on: it
///   takes the database's write lock before `body` reads anything, so two processes
///   (or hosts) deciding at once take turns and the second sees what the first
///   committed (SQLite: `BEGIN IMMEDIATE`; PostgreSQL: `BEGIN` and
///   `pg_advisory_xact_lock`, under READ COMMITTED). It commits when `body` returns
///   and rolls back when it throws.
/// - `migrate` brings the schema to `JournalSchema.version` in one such transaction,
///   and refuses a newer schema (`JournalError(.schemaTooNew)`).
/// - Errors are the backend's (`SQLiteError`, `PostgresError`); `Journal` maps them.
/// - Not thread-safe: `Journal` serializes every call.
protocol JournalDatabase: AnyObject {
    var dialect: JournalDialect { get }
    /// The database as messages name it: the file's path, or the URL with its password masked.
    var displayName: String { get }
    /// Runs a statement; returns the number of rows it changed.
    @discardableResult
    func run(_ sql: String, _ args: [SQLValue]) throws -> Int
    /// Calls `row` for every result row.
    func query(_ sql: String, _ args: [SQLValue], _ row: (any JournalRow) throws -> Void) throws
    /// Maps the first result row, if any.
    func first<T>(_ sql: String, _ args: [SQLValue], _ map: (any JournalRow) throws -> T) throws -> T?
    func writeTransaction<T>(_ body: () throws -> T) throws -> T
    func migrate() throws
}

extension JournalDatabase {
    func query(_ sql: String, _ row: (any JournalRow) throws -> Void) throws { try query(sql, [], row) }
    func first<T>(_ sql: String, _ map: (any JournalRow) throws -> T) throws -> T? { try first(sql, [], map) }
}
