import CSQLite
import Foundation

/// A value bound to a statement parameter.
public enum SQLValue: Sendable, Equatable {
    case int(Int)
    case text(String)
    case null

    public static func opt(_ s: String?) -> SQLValue { s.map(SQLValue.text) ?? .null }
    public static func opt(_ i: Int?) -> SQLValue { i.map(SQLValue.int) ?? .null }
    public static func opt(_ i: Int64?) -> SQLValue { i.map { .int(Int($0)) } ?? .null }
}

/// A failed SQLite call: SQLite's result code and message, the database's path and,
/// when a statement failed, the start of its SQL.
public struct SQLiteError: Error, CustomStringConvertible {
    public let code: Int32
    public let message: String
    public let path: String
    public let sql: String?
    public var description: String {
        "SQLite error \(code) on \(path): \(message)" + (sql.map { " (in: \($0.prefix(60)))" } ?? "")
    }
    /// SQLITE_BUSY or SQLITE_LOCKED: another connection holds a lock.
    public var isLocked: Bool { code & 0xFF == SQLITE_BUSY || code & 0xFF == SQLITE_LOCKED }
}

/// One SQLite connection with a cache of prepared statements: the only type in the
/// package that calls the SQLite C API (the journal and the sandbox both use it).
///
/// Not thread-safe: the owner serializes every call (the sandbox holds one lock per
/// request, the journal one per call). A statement in use by `query`, `run` or
/// `first` is taken out of the cache, so a nested call with the same SQL text
/// prepares its own instead of resetting the outer one.
public final class SQLiteDatabase {
    private let handle: OpaquePointer
    private var cache: [String: Statement] = [:]
    /// The path it was opened with (`:memory:` for a private in-memory database).
    public let path: String

    /// Opens (creating if missing) the database at `path` and sets `busy_timeout`.
    /// `readOnly`: opens an existing database for reading only (a missing file is an
    /// error, and no statement can write); `path` may then be a `file:` URI
    /// (`file:/x.sqlite?immutable=1`).
    public init(path: String, busyTimeoutMs: Int32 = 5_000, readOnly: Bool = false) throws {
        self.path = path
        _ = Self.configureProcess
        var db: OpaquePointer?
        let flags = readOnly ? SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
            : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let msg = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let db { sqlite3_close_v2(db) }
            throw SQLiteError(code: rc, message: "cannot open: \(msg)", path: path, sql: nil)
        }
        handle = db
        sqlite3_busy_timeout(db, busyTimeoutMs)
    }

    /// Process-wide settings, before the first connection initializes SQLite.
    private static let configureProcess: Void = { _ = csqlite_no_bulk_page_cache() }()

    deinit {
        for s in cache.values { s.finalize() }
        sqlite3_close_v2(handle)
    }

    /// Switches a file database to WAL with `synchronous = NORMAL` (nothing for
    /// `:memory:`). The switch needs a lock the busy handler does not always wait for
    /// (two processes opening a new file at once), so a locked database is retried for
    /// up to ~2 s.
    public func enableWAL() throws {
        guard path != ":memory:" else { return }
        var attempt = 0
        while true {
            do {
                try exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")
                return
            } catch let error as SQLiteError where error.isLocked && attempt < 100 {
                attempt += 1
                usleep(20_000)
            }
        }
    }

    /// Makes this connection leave the write-ahead log (and its index) in place when it
    /// closes, frames and all, instead of copying them into the file (two fsyncs) and
    /// deleting the log — which the next writer would then make again, with an fsync of
    /// its header and of the folder. The next connection to open the file reads the log
    /// back (SQLite rebuilds its index from it), so the caller keeps the log short
    /// (`wal_checkpoint`). Nothing for `:memory:`.
    public func keepWriteAheadLogAtClose() throws {
        guard path != ":memory:" else { return }
        var persist: Int32 = 1
        var rc = sqlite3_file_control(handle, "main", SQLITE_FCNTL_PERSIST_WAL, &persist)
        if rc == SQLITE_OK { rc = csqlite_set_no_checkpoint_on_close(handle, 1) }
        guard rc == SQLITE_OK else {
            throw SQLiteError(code: rc, message: "cannot keep the write-ahead log at close: \(errorMessage)", path: path, sql: nil)
        }
    }

    /// Turns on foreign key enforcement (`PRAGMA foreign_keys = ON` without parsing one).
    public func enableForeignKeys() throws {
        let rc = csqlite_enable_foreign_keys(handle)
        guard rc == SQLITE_OK else {
            throw SQLiteError(code: rc, message: "cannot enable foreign keys: \(errorMessage)", path: path, sql: nil)
        }
    }

    /// Runs one or more statements without results.
    public func exec(_ sql: String) throws {
        var err: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &err)
        if rc != SQLITE_OK {
            let msg = err.map { String(cString: $0) } ?? errorMessage
            sqlite3_free(err)
            throw SQLiteError(code: rc, message: msg, path: path, sql: sql)
        }
    }

    /// How many distinct SQL texts have a prepared statement (tests).
    public var cachedStatementCount: Int { cache.count }

    /// The number of rows changed by the last INSERT, UPDATE or DELETE.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    /// Runs a write; returns the number of changed rows.
    @discardableResult
    public func run(_ sql: String, _ args: [SQLValue] = []) throws -> Int {
        try using(sql, args) { s in _ = try s.step() }
        return changes
    }

    /// Calls `row` for every result row.
    public func query(_ sql: String, _ args: [SQLValue] = [], _ row: (Statement) throws -> Void = { _ in }) throws {
        try using(sql, args) { s in while try s.step() { try row(s) } }
    }

    /// Maps the first result row, if any.
    public func first<T>(_ sql: String, _ args: [SQLValue] = [], _ map: (Statement) throws -> T) throws -> T? {
        try using(sql, args) { s in try s.step() ? map(s) : nil }
    }

    /// Runs `body` in an IMMEDIATE transaction; rolls back when it throws. BEGIN, COMMIT
    /// and ROLLBACK are cached prepared statements like any other, not parsed per call.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try run("BEGIN IMMEDIATE")
        do {
            let r = try body()
            try run("COMMIT")
            return r
        } catch {
            _ = try? run("ROLLBACK")
            throw error
        }
    }

    /// The prepared statement for `sql` (from the cache, taken out while in use), reset
    /// and with `args` bound to `?1…?n`, given to `body`, then reset and cached again.
    private func using<T>(_ sql: String, _ args: [SQLValue], _ body: (Statement) throws -> T) throws -> T {
        let stmt: Statement
        if let cached = cache.removeValue(forKey: sql) { stmt = cached } else {
            var raw: OpaquePointer?
            let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &raw, nil)
            guard rc == SQLITE_OK, let raw else { throw SQLiteError(code: rc, message: errorMessage, path: path, sql: sql) }
            stmt = Statement(raw, database: self, sql: sql)
        }
        defer {
            stmt.reset()
            if cache[sql] == nil { cache[sql] = stmt } else { stmt.finalize() }
        }
        for (i, a) in args.enumerated() { stmt.bind(Int32(i + 1), a) }
        return try body(stmt)
    }

    fileprivate var errorMessage: String { String(cString: sqlite3_errmsg(handle)) }
}

/// A prepared statement of an `SQLiteDatabase`, positioned on a row while it is handed
/// to a `query`/`first` callback (valid only there). Columns are 0-based.
public final class Statement {
    private let raw: OpaquePointer
    private unowned let database: SQLiteDatabase
    private let sql: String

    init(_ raw: OpaquePointer, database: SQLiteDatabase, sql: String) {
        self.raw = raw
        self.database = database
        self.sql = sql
    }

    func finalize() { sqlite3_finalize(raw) }
    func reset() { sqlite3_reset(raw); sqlite3_clear_bindings(raw) }

    func bind(_ index: Int32, _ value: SQLValue) {
        switch value {
        case .int(let i): sqlite3_bind_int64(raw, index, Int64(i))
        case .text(let s): sqlite3_bind_text(raw, index, s, -1, csqlite_transient())
        case .null: sqlite3_bind_null(raw, index)
        }
    }

    /// Advances; true when a row is available.
    func step() throws -> Bool {
        let rc = sqlite3_step(raw)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        throw SQLiteError(code: rc, message: database.errorMessage, path: database.path, sql: sql)
    }

    /// Column `i` as an integer (0 for NULL).
    public func int(_ i: Int32) -> Int { Int(sqlite3_column_int64(raw, i)) }
    public func intOrNil(_ i: Int32) -> Int? { sqlite3_column_type(raw, i) == SQLITE_NULL ? nil : int(i) }
    /// Column `i` as text ("" for NULL).
    public func text(_ i: Int32) -> String { textOrNil(i) ?? "" }
    public func textOrNil(_ i: Int32) -> String? {
        guard sqlite3_column_type(raw, i) != SQLITE_NULL, let p = sqlite3_column_text(raw, i) else { return nil }
        return String(cString: p)
    }
    public func bool(_ i: Int32) -> Bool { sqlite3_column_int64(raw, i) != 0 }

    /// Column `i`'s UTF-8 bytes, NUL-terminated, valid until the next step; nil for
    /// NULL. For writers that copy text without making a `String`.
    public func textPointer(_ i: Int32) -> UnsafePointer<UInt8>? { sqlite3_column_text(raw, i) }
}
