import SQLiteKit

extension Statement: JournalRow {}

/// The embedded journal: one SQLite file (WAL, `synchronous = NORMAL`) in the state
/// directory, or `:memory:`. See `JournalDatabase` for the contracts.
final class SQLiteJournalDatabase: JournalDatabase {
    let raw: SQLiteDatabase

    init(path: String, busyTimeoutMs: Int32) throws {
        let db = try SQLiteDatabase(path: path, busyTimeoutMs: busyTimeoutMs)
        // A new file gives freed pages back after a prune (`Journal.giveSpaceBack`). Set
        // only on an empty file: on one with tables it would change nothing (that needs
        // a full VACUUM), and it waits for the write lock, which an open must not.
        if try db.first("PRAGMA page_count", [], { $0.int(0) }) == 0 { try db.exec("PRAGMA auto_vacuum = INCREMENTAL") }
        try db.enableWAL()
        // Closing leaves the log: see `Journal.markClosedCleanly`.
        try db.keepWriteAheadLogAtClose()
        try db.enableForeignKeys()
        raw = db
    }

    var dialect: JournalDialect { .sqlite }
    var displayName: String { raw.path }

    func run(_ sql: String, _ args: [SQLValue]) throws -> Int { try raw.run(sql, args) }

    func query(_ sql: String, _ args: [SQLValue], _ row: (any JournalRow) throws -> Void) throws {
        try raw.query(sql, args) { try row($0) }
    }

    func first<T>(_ sql: String, _ args: [SQLValue], _ map: (any JournalRow) throws -> T) throws -> T? {
        try raw.first(sql, args) { try map($0) }
    }

    /// `BEGIN IMMEDIATE`: the write lock up front, so two processes never deadlock
    /// upgrading a read lock.
    func writeTransaction<T>(_ body: () throws -> T) throws -> T { try raw.transaction(body) }

    func migrate() throws { try JournalSchema.migrate(raw) }
}
