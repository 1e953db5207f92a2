import CSQLite
import Foundation

/// A value bound to or read from SQLite.
enum SQLValue: Sendable, Equatable {
    case int(Int)
    case text(String)
    case null

    static func opt(_ s: String?) -> SQLValue { s.map(SQLValue.text) ?? .null }
    static func opt(_ i: Int?) -> SQLValue { i.map(SQLValue.int) ?? .null }
}

/// A failed SQLite call, with SQLite's own message.
struct SQLiteError: Error, CustomStringConvertible {
    let code: Int32
    let message: String
    var description: String { "SQLite error \(code): \(message)" }
}

/// One SQLite connection with a cache of prepared statements.
///
/// Not thread-safe: the owner serializes every call (the sandbox holds one lock per
/// request). This is the only file that calls the SQLite C API.
final class Database {
    private let handle: OpaquePointer
    private var cache: [String: Statement] = [:]

    /// Opens `path` (":memory:" for a private in-memory database). Files use WAL.
    init(path: String) throws {
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let msg = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            if let db { sqlite3_close_v2(db) }
            throw SQLiteError(code: rc, message: "\(msg) (\(path))")
        }
        handle = db
        sqlite3_busy_timeout(db, 5_000)
        if path != ":memory:" {
            // Switching to WAL needs a lock the busy handler does not always wait for
            // (two processes opening a new file at once): retry for up to ~2 s.
            var attempt = 0
            while true {
                do {
                    try exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")
                    break
                } catch let error as SQLiteError where (error.code == SQLITE_BUSY || error.code == SQLITE_LOCKED) && attempt < 100 {
                    attempt += 1
                    usleep(20_000)
                }
            }
        }
        try exec("PRAGMA foreign_keys=OFF; PRAGMA temp_store=MEMORY;")
    }

    deinit {
        for s in cache.values { s.finalize() }
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements without results.
    func exec(_ sql: String) throws {
        var err: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &err)
        if rc != SQLITE_OK {
            let msg = err.map { String(cString: $0) } ?? "exec failed"
            sqlite3_free(err)
            throw SQLiteError(code: rc, message: msg)
        }
    }

    /// How many distinct SQL texts have a prepared statement (tests).
    var cachedStatementCount: Int { cache.count }

    /// The cached prepared statement for `sql`, reset and with `args` bound.
    func statement(_ sql: String, _ args: [SQLValue]) throws -> Statement {
        let stmt: Statement
        if let s = cache[sql] { stmt = s } else {
            var raw: OpaquePointer?
            let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &raw, nil)
            guard rc == SQLITE_OK, let raw else { throw SQLiteError(code: rc, message: String(cString: sqlite3_errmsg(handle)) + " in: " + sql) }
            stmt = Statement(raw, db: handle)
            cache[sql] = stmt
        }
        stmt.reset()
        for (i, a) in args.enumerated() { stmt.bind(Int32(i + 1), a) }
        return stmt
    }

    /// Runs a write; returns the number of changed rows.
    @discardableResult
    func run(_ sql: String, _ args: [SQLValue] = []) throws -> Int {
        let s = try statement(sql, args)
        defer { s.reset() }
        _ = try s.step()
        return Int(sqlite3_changes(handle))
    }

    /// Calls `row` for every result row.
    func query(_ sql: String, _ args: [SQLValue] = [], _ row: (Statement) throws -> Void) throws {
        let s = try statement(sql, args)
        defer { s.reset() }
        while try s.step() { try row(s) }
    }

    /// Maps the first result row, if any.
    func first<T>(_ sql: String, _ args: [SQLValue] = [], _ map: (Statement) throws -> T) throws -> T? {
        let s = try statement(sql, args)
        defer { s.reset() }
        return try s.step() ? map(s) : nil
    }

    /// Runs `body` in a transaction; rolls back when it throws. BEGIN, COMMIT and
    /// ROLLBACK are cached prepared statements like any other, not parsed per call.
    func transaction<T>(_ body: () throws -> T) throws -> T {
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
}

/// A prepared statement owned by a `Database`. Columns are 0-based.
final class Statement {
    private let raw: OpaquePointer
    private let db: OpaquePointer

    init(_ raw: OpaquePointer, db: OpaquePointer) { self.raw = raw; self.db = db }

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
        throw SQLiteError(code: rc, message: String(cString: sqlite3_errmsg(db)))
    }

    func int(_ i: Int32) -> Int { Int(sqlite3_column_int64(raw, i)) }
    func intOrNil(_ i: Int32) -> Int? { sqlite3_column_type(raw, i) == SQLITE_NULL ? nil : int(i) }
    func text(_ i: Int32) -> String { textOrNil(i) ?? "" }
    func textOrNil(_ i: Int32) -> String? {
        guard let p = sqlite3_column_text(raw, i) else { return nil }
        return String(cString: p)
    }
    func bool(_ i: Int32) -> Bool { sqlite3_column_int64(raw, i) != 0 }

    /// Writes column `i` as a JSON string, byte for byte what `JSON.string(text(i))`
    /// writes (`""` for NULL), without making a `String` for ASCII text.
    func writeText(_ i: Int32, into out: inout [UInt8]) {
        guard let p = sqlite3_column_text(raw, i) else { out.appendASCII("\"\""); return }
        JSON.writeString(cText: p, into: &out)
    }

    /// Writes column `i` as `JSON.str(textOrNil(i))` writes it: a string, or `null`.
    func writeTextOrNull(_ i: Int32, into out: inout [UInt8]) {
        guard let p = sqlite3_column_text(raw, i) else { out.appendASCII("null"); return }
        JSON.writeString(cText: p, into: &out)
    }
}
