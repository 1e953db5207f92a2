import CSQLite
import Foundation

/// A thin wrapper over one sqlite3 connection: the only file of the journal that
/// calls the SQLite C API. Not thread-safe by itself; `Journal` serializes access.
final class SQLiteConnection {
    private var db: OpaquePointer?
    let path: String
    /// Prepared statements by SQL text, reused by `query` (a statement in use is taken
    /// out, so a nested query of the same text prepares its own).
    private var statements: [String: OpaquePointer] = [:]

    /// Opens (creating if missing) the database at `path` (`":memory:"` for a
    /// private in-memory database) and sets `busy_timeout` to `busyTimeoutMs`.
    init(path: String, busyTimeoutMs: Int32) throws {
        self.path = path
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(db)
            db = nil
            throw JournalError(.sqlite, "cannot open the journal \(path): \(message)")
        }
        sqlite3_busy_timeout(db, busyTimeoutMs)
    }

    deinit {
        for stmt in statements.values { sqlite3_finalize(stmt) }
        sqlite3_close_v2(db)
    }

    /// Runs one or more statements that return no rows.
    func exec(_ sql: String) throws {
        var err: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(db, sql, nil, nil, &err)
        if rc != SQLITE_OK {
            let message = err.map { String(cString: $0) } ?? errorMessage
            sqlite3_free(err)
            throw JournalError(.sqlite, "journal \(path): \(message) (in: \(sql.prefix(60)))")
        }
    }

    /// Prepares `sql` (once per connection: statements are cached by their text), binds
    /// `values` to `?1…?n`, and calls `row` for each result row. `sql` is one statement.
    func query(_ sql: String, _ values: [SQLValue] = [], row: (Row) throws -> Void = { _ in }) throws {
        var stmt = statements.removeValue(forKey: sql)
        if stmt == nil {
            guard sqlite3_prepare_v2(db, sql, -1, &stmt, nil) == SQLITE_OK else {
                throw JournalError(.sqlite, "journal \(path): \(errorMessage) (in: \(sql.prefix(60)))")
            }
        }
        defer {
            sqlite3_reset(stmt)
            sqlite3_clear_bindings(stmt)
            if let stmt, statements[sql] == nil { statements[sql] = stmt } else { sqlite3_finalize(stmt) }
        }
        for (n, value) in values.enumerated() {
            let i = Int32(n + 1)
            switch value {
            case .null: sqlite3_bind_null(stmt, i)
            case .integer(let v): sqlite3_bind_int64(stmt, i, v)
            case .text(let s): sqlite3_bind_text(stmt, i, s, -1, csqlite_transient())
            }
        }
        while true {
            let rc = sqlite3_step(stmt)
            if rc == SQLITE_DONE { return }
            guard rc == SQLITE_ROW else {
                throw JournalError(.sqlite, "journal \(path): \(errorMessage) (in: \(sql.prefix(60)))")
            }
            try row(Row(stmt: stmt))
        }
    }

    /// The number of rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { Int(sqlite3_changes(db)) }

    private var errorMessage: String { String(cString: sqlite3_errmsg(db)) }

    /// A value bound to a statement parameter.
    enum SQLValue {
        case null
        case integer(Int64)
        case text(String)

        init(_ s: String?) { self = s.map { .text($0) } ?? .null }
        init(_ i: Int?) { self = i.map { .integer(Int64($0)) } ?? .null }
    }

    /// The current row of a stepping statement; valid only inside the `row` callback.
    struct Row {
        let stmt: OpaquePointer?

        func text(_ column: Int32) -> String? {
            guard sqlite3_column_type(stmt, column) != SQLITE_NULL,
                  let p = sqlite3_column_text(stmt, column) else { return nil }
            return String(cString: p)
        }

        func int(_ column: Int32) -> Int? {
            guard sqlite3_column_type(stmt, column) != SQLITE_NULL else { return nil }
            return Int(sqlite3_column_int64(stmt, column))
        }
    }
}
