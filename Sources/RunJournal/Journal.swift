import Foundation
import HubClient
import PostgresKit
import SQLiteKit

/// The idempotency journal: every run and every write, in SQLite (a file in the state
/// directory, the default) or PostgreSQL (one database several hosts share). Its logic
/// is written once over `JournalDatabase`; only the executor differs.
///
/// Contracts:
/// - Each mutating call is one committed transaction when it returns, so a
///   `recordPending` (or `beginWrite`) is durable before the caller sends the request.
///   An outcome is committed by `recordDone`/`recordFailed` right after, or — with
///   `recordDone(…, deferred: true)`, what a live run uses — together with the next
///   transaction, at `flush()`, or before any read of the journal: one commit per write
///   instead of two. `kill -9` at any point loses at most the outcome of the last
///   write, which stays `pending` and is resent with the same key (the Hub replays it).
/// - The file uses WAL with `synchronous = NORMAL`: a committed transaction survives
///   the process being killed (it is in the WAL, handed to the OS), but not a power
///   loss, which may drop the last few. That is safe by design: a write whose `done`
///   row was lost is resent with the same derived key and the Hub replays it (keys are
///   kept 24 h). `FULL` would add two fsyncs per write — about half the time of a bulk
///   grant (scripts/bench-recipes) — for no gain in exactly-once.
/// - Another process (or another `Journal` on the same file) may use it at once: a
///   locked database is waited on for up to `busyTimeout` before failing.
/// - On PostgreSQL, commits are the server's (durable when it says so); processes on
///   every host that share the database take turns writing, as processes sharing a
///   file do, and the run locks are the server's too (`runLocks(state:)`).
/// - Thread-safe: calls are serialized by a lock.
public final class Journal: @unchecked Sendable {
    /// The journal's file name inside the state directory.
    public static let fileName = "journal.sqlite"
    /// The schema version this code reads and writes (`PRAGMA user_version`).
    public static var schemaVersion: Int { Int(JournalSchema.version) }

    let db: any JournalDatabase
    /// The file's path (`:memory:` for an in-memory journal), or the PostgreSQL URL with
    /// its password masked.
    public var path: String { db.displayName }
    /// Where it is.
    public let location: JournalLocation
    /// The PostgreSQL run locks (one probe connection per journal), made on first use.
    private var postgresLocks: PostgresRunLocks?
    /// An NSLock, not a Mutex: it serialises the database connection (not Sendable)
    /// and the staged outcome across the journal's extensions, and `locked` hands
    /// back whatever its body reads.
    private let lock = NSLock()
    /// An outcome recorded with `deferred: true` and not committed yet (guarded by `lock`).
    var staged: StagedOutcome?
    /// Lines of runs' output waiting for the next commit (`stageOutput`; guarded by `lock`).
    var stagedOutput: [(runID: String, lines: [RunOutputLine])] = []
    /// Keeps the side record of the file's commits (`Journal+History`); set by
    /// `openChecked` for a SQLite file, nil otherwise (guarded by `lock`).
    var commitLog: JournalCommitLog?
    /// When `noteProgress` last committed a run's totals (`systemUptime`; guarded by `lock`).
    var progressCommittedAt = -Double.infinity
    /// `noteProgress` commits a run's totals at most this often.
    public static let progressInterval: Double = 1
    private let clock: @Sendable () -> Date

    /// Opens the journal file at `path`, creating it (and its schema) if missing.
    /// - Parameter busyTimeout: how long to wait for another writer, in milliseconds.
    public convenience init(path: String, busyTimeout: Int32 = 10_000,
                            clock: @escaping @Sendable () -> Date = { Date() }) throws {
        try self.init(path: path, busyTimeout: busyTimeout, migrating: true, clock: clock)
    }

    /// `init(path:)`, leaving the schema as it is unless `migrating` (`openChecked`
    /// checks the file's history before anything writes to it).
    init(path: String, busyTimeout: Int32 = 10_000, migrating: Bool,
         clock: @escaping @Sendable () -> Date = { Date() }) throws {
        self.clock = clock
        location = .sqlite(path: path)
        db = try Journal.mappingStoreErrors {
            let db = try SQLiteJournalDatabase(path: path, busyTimeoutMs: busyTimeout)
            if migrating { try db.migrate() }
            return db
        }
    }

    /// Opens the PostgreSQL journal at `url`, creating its tables (in the connection's
    /// schema) if missing.
    /// - Throws: `JournalError(.postgres)` saying what to do when the server cannot be
    ///   reached or refuses the login; the message never shows the URL's password.
    public init(postgres url: PostgresURL, clock: @escaping @Sendable () -> Date = { Date() }) throws {
        self.clock = clock
        location = .postgres(url)
        db = try Journal.mappingStoreErrors {
            let db = try PostgresJournalDatabase(url: url)
            try db.migrate()
            return db
        }
    }

    /// Opens the journal at `location`.
    public convenience init(_ location: JournalLocation, clock: @escaping @Sendable () -> Date = { Date() }) throws {
        switch location {
        case .sqlite(let path): try self.init(path: path, clock: clock)
        case .postgres(let url): try self.init(postgres: url, clock: clock)
        }
    }

    /// The SQLite database, nil on PostgreSQL (integrity checks and clean-close markers).
    var sqlite: SQLiteDatabase? { (db as? SQLiteJournalDatabase)?.raw }

    /// The locks of runs recorded in this journal: `flock`s in `state` for SQLite (one
    /// host), the server's advisory locks for PostgreSQL (every host sharing it).
    public func runLocks(state: StateDirectory) -> any RunLocks {
        guard case .postgres(let url) = location, let pg = db as? PostgresJournalDatabase else {
            return FileRunLocks(state: state)
        }
        return lock.withLock {
            if let postgresLocks { return postgresLocks }
            let made = PostgresRunLocks(url: url, schema: pg.schema)
            postgresLocks = made
            return made
        }
    }

    /// Opens `journal.sqlite` in `directory`, creating the directory (mode 0700: the
    /// journal holds Hub responses) if needed.
    public convenience init(stateDirectory directory: URL,
                            clock: @escaping @Sendable () -> Date = { Date() }) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        try self.init(path: directory.appendingPathComponent(Journal.fileName).path, clock: clock)
    }

    /// A private in-memory journal (tests, `--no-journal`); gone when released.
    public static func inMemory(clock: @escaping @Sendable () -> Date = { Date() }) throws -> Journal {
        try Journal(path: ":memory:", clock: clock)
    }

    func locked<T>(_ body: (any JournalDatabase) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(db)
    }

    /// Runs a read after committing any staged outcome, so reads see every write's state.
    func reading<T>(_ body: (any JournalDatabase) throws -> T) throws -> T {
        try flush()
        return try Journal.mappingStoreErrors { try locked(body) }
    }

    /// Runs `body`, turning a failed SQLite call into `JournalError(.sqlite)` and a
    /// failed PostgreSQL call into `JournalError(.postgres)` (with what to do when the
    /// server is out of reach).
    static func mappingStoreErrors<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as SQLiteError {
            throw JournalError(.sqlite, "journal \(error.path): \(error.message)" + (error.sql.map { " (in: \($0.prefix(60)))" } ?? ""))
        } catch let error as PostgresError {
            throw postgresError(error)
        }
    }

    static func postgresError(_ error: PostgresError) -> JournalError {
        if error.kind == .badURL { return JournalError(.postgres, "journal: \(error.message)") }
        switch error.isConnectionLost {
        case true:
            return JournalError(.postgres, """
                the PostgreSQL journal is out of reach: \(error.description) — check that the server \
                is running and that the journal URL in the configuration names the right host, database, \
                user and password (or set PGPASSWORD or ~/.pgpass), then run again (a run this stopped \
                resumes with hubscript runs resume RUN_ID)
                """)
        case false:
            return JournalError(.postgres, "PostgreSQL journal: \(error.description)")
        }
    }

    /// Commits a staged outcome (`recordDone(…, deferred: true)`), if any.
    public func flush() throws {
        guard locked({ _ in staged != nil || !stagedOutput.isEmpty }) else { return }
        try transaction { _ in }
    }

    /// Whether this process may vouch for the file at close (`markClosedCleanly`): set
    /// by `openChecked` when it made the journal, found it as a clean close left it, or
    /// checked it. A journal opened without a check (a listing) leaves no marker, so a
    /// damaged file is never passed off as cleanly closed.
    var vouchesAtClose = false

    deinit {
        try? flush()
        if vouchesAtClose { markClosedCleanly() }
    }

    /// Milliseconds since 1970 (UTC) of the journal's clock.
    func nowMs() -> Int64 { Journal.ms(clock()) }

    static func ms(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
    static func date(_ ms: Int?) -> Date? { ms.map { Date(timeIntervalSince1970: Double($0) / 1000) } }

    /// Runs `body` in a write transaction (`JournalDatabase.writeTransaction`: the write
    /// lock taken up front, so writers take turns and never deadlock), committing on success. A
    /// staged outcome is written first and stays staged if the transaction fails.
    func transaction<T>(_ body: (any JournalDatabase) throws -> T) throws -> T {
        try Journal.mappingStoreErrors {
            try locked { db in
                var mark: Int?
                let result = try db.writeTransaction {
                    let before = try commitLog.map { _ in try Journal.lastWriteRow(db) }
                    if let staged { try Journal.write(staged, db) }
                    for batch in stagedOutput { try Journal.insertOutput(db, runID: batch.runID, batch.lines) }
                    let result = try body(db)
                    if let before { mark = try Journal.advanceHistoryMark(db, lastWriteRowBefore: before) }
                    return result
                }
                staged = nil   // committed with it
                stagedOutput = []
                if let mark { commitLog?.record(mark) }
                return result
            }
        }
    }
}
