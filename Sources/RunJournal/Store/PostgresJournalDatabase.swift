import Foundation
import PostgresKit
import SQLiteKit

extension PostgresRow: JournalRow {}

/// The shared journal: tables in a PostgreSQL schema (the first of the connection's
/// `search_path`, `public` unless the URL sets `options=-csearch_path=…`), so
/// schedulers and listeners on several hosts share one run history. See
/// `JournalDatabase` for the contracts.
///
/// - The write lock is a transaction-level advisory lock keyed by the schema
///   (`pg_advisory_xact_lock`), taken right after `BEGIN`: write transactions of every
///   host take turns, as SQLite's `BEGIN IMMEDIATE` makes processes do, and each of
///   their statements (READ COMMITTED) sees what the one before committed.
/// - A connection the server dropped (a restart) is reopened at the start of the next
///   call; a call that was under way fails with the server's error.
final class PostgresJournalDatabase: JournalDatabase {
    let connection: PostgresConnection
    /// The schema the journal's tables live in (`current_schema()`).
    let schema: String
    private var translated: [String: String] = [:]
    private var inTransaction = false

    init(url: PostgresURL) throws {
        connection = try PostgresConnection(url: url)
        guard let schema = try connection.first("SELECT current_schema()", [], { $0.textOrNil(0) }) ?? nil else {
            throw PostgresError(.statement, """
                no schema of the search_path exists in \(url.redacted) (create one, or set \
                options=-csearch_path=SCHEMA in the URL)
                """)
        }
        self.schema = schema
    }

    var dialect: JournalDialect { .postgres }
    var displayName: String { connection.url.redacted }

    /// The write lock's key: per schema, so journals in different schemas of one
    /// database do not wait for each other.
    var writeLockKey: Int64 { PostgresRunLocks.key("hubscript journal write", schema: schema) }

    func run(_ sql: String, _ args: [SQLValue]) throws -> Int {
        try reopenIfNeeded()
        return try connection.run(postgres(sql), args.map(Self.value))
    }

    func query(_ sql: String, _ args: [SQLValue], _ row: (any JournalRow) throws -> Void) throws {
        try reopenIfNeeded()
        try connection.query(postgres(sql), args.map(Self.value)) { try row($0) }
    }

    func first<T>(_ sql: String, _ args: [SQLValue], _ map: (any JournalRow) throws -> T) throws -> T? {
        try reopenIfNeeded()
        return try connection.first(postgres(sql), args.map(Self.value)) { try map($0) }
    }

    func writeTransaction<T>(_ body: () throws -> T) throws -> T {
        try reopenIfNeeded()
        inTransaction = true
        defer { inTransaction = false }
        return try connection.transaction {
            try connection.run("SELECT pg_advisory_xact_lock($1)", [.int(Int(writeLockKey))])
            return try body()
        }
    }

    func migrate() throws {
        try writeTransaction {
            try connection.exec("CREATE TABLE IF NOT EXISTS journal_schema (version INTEGER NOT NULL)")
            var found = try connection.first("SELECT max(version) FROM journal_schema", []) { $0.intOrNil(0) } ?? nil
            if found == nil {
                // A new journal: every step from the first, as a new SQLite file takes them.
                try connection.run("INSERT INTO journal_schema (version) VALUES ($1)", [.int(0)])
                found = 0
            }
            guard let current = found else { return }
            guard current <= Int(JournalSchema.version) else { throw JournalSchema.tooNew(displayName, current) }
            for step in current..<Int(JournalSchema.version) {
                try connection.exec(JournalSchema.postgresMigrations[step])
            }
            if current < Int(JournalSchema.version) {
                try connection.run("UPDATE journal_schema SET version = $1", [.int(Int(JournalSchema.version))])
            }
        }
    }

    /// Reconnects after the server dropped the connection — unless a run of this
    /// process lost its run lock with it (`PostgresRunLock.anyLost`): that run must stop
    /// at its next journal call, not carry on unlocked.
    private func reopenIfNeeded() throws {
        guard !inTransaction && !connection.isOpen else { return }
        if PostgresRunLock.anyLost() {
            throw PostgresError(.connection, """
                lost the connection to \(connection.url.redacted), and with it the lock of a run in this process; \
                that run stops here
                """)
        }
        try connection.reset()
    }

    /// `sql` with `?N` placeholders as `$N` (outside quoted text), cached per text.
    private func postgres(_ sql: String) -> String {
        if let done = translated[sql] { return done }
        var out = ""
        var quoted = false
        var previous: Character = " "
        for c in sql {
            if c == "'" { quoted.toggle() }
            if !quoted && previous == "?" && c.isNumber { out.removeLast(); out += "$" }
            out.append(c)
            previous = c
        }
        translated[sql] = out
        return out
    }

    private static func value(_ v: SQLValue) -> PostgresValue {
        switch v {
        case .int(let i): .int(i)
        case .text(let s): .text(s)
        case .null: .null
        }
    }
}
