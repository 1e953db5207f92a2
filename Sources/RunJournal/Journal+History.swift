import Foundation
import SQLiteKit
import SystemText

/// Telling a journal that lost committed history from one that did not.
///
/// SQLite keeps a transaction's pages in the write-ahead log (`journal.sqlite-wal`)
/// until a checkpoint copies them into the file. A log that is deleted, or whose
/// header is damaged, is ignored at the next open: every transaction in it is gone,
/// and the journal opens as it was at the last checkpoint — runs, writes and fires
/// missing, with nothing to say so. So the journal keeps a history mark twice:
///
/// - in the file: the last `writes` row id plus `journal_commits.commits`, which every
///   write transaction that adds no `writes` row bumps (`Journal.transaction`). Each
///   commit raises the mark, and it is exactly as durable as the history it measures;
/// - beside the file, in `<journal>-commits`, rewritten after each commit with the mark
///   that commit made (never lowered: concurrent writers take turns with `flock`).
///
/// At every open (`openChecked`), the side record is read first, then the file's mark:
/// the file's mark only grows and the side record only ever holds a mark the file
/// committed, so the file's mark is never below the side record unless committed
/// transactions were lost. A process killed at any point leaves the side record at
/// most one commit behind the file (never ahead), so no false alarm follows a
/// `kill -9`; a commit lost with its log is one the side record had already counted.
///
/// Cost per commit: a live write's commit (`beginWrite`, which adds a `writes` row)
/// writes no page more, it reads the last row id twice (the B-tree's rightmost path,
/// in the page cache); other commits update one row more. Then `flock`, `pread`,
/// `pwrite` on the side record (no `fsync`). scripts/bench-journal measures it.
///
/// After a power cut the log may lose its last few commits (`synchronous = NORMAL`:
/// see `Journal`) while the side record kept them: that is reported too, as it is a
/// loss. PostgreSQL journals have no such record: the server makes each commit
/// durable before it answers.
extension Journal {
    /// The side record's path for the journal at `path`.
    static func commitRecordPath(_ path: String) -> String { path + "-commits" }

    /// The table that counts the file's commits (one row, `id = 1`). Made outside the
    /// versioned schema (`JournalSchema`), idempotently, by the first checked open.
    static let commitTableSQL = """
        CREATE TABLE IF NOT EXISTS journal_commits (
            id           INTEGER PRIMARY KEY CHECK (id = 1),
            journal_id   TEXT NOT NULL,
            commits      INTEGER NOT NULL,
            journal_path TEXT
        )
        """

    /// The file's own history mark, or nil when it has no `journal_commits` row.
    static func fileCommits(_ sqlite: SQLiteDatabase) throws -> CommitCount? {
        let table = try sqlite.first("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'journal_commits'") { $0.int(0) }
        guard table == 1 else { return nil }
        return try sqlite.first("""
            SELECT journal_id, commits + (SELECT coalesce(max(rowid), 0) FROM writes), journal_path
            FROM journal_commits WHERE id = 1
            """) {
            CommitCount(journalID: $0.text(0), commits: $0.int(1), path: $0.textOrNil(2))
        }
    }

    /// The last `writes` row id (0 for none). It grows with every write; a prune
    /// (`Journal.prune`) may lower it, and then raises `commits` by as much and one more,
    /// so the history mark still only grows.
    static func lastWriteRow(_ db: any JournalDatabase) throws -> Int {
        try db.first("SELECT coalesce(max(rowid), 0) FROM writes") { $0.int(0) } ?? 0
    }

    /// Inside a write transaction, after its changes: the history mark it commits,
    /// bumping `journal_commits.commits` if the transaction added no `writes` row (by
    /// one, plus what a prune's deletion took off the last row id).
    static func advanceHistoryMark(_ db: any JournalDatabase, lastWriteRowBefore before: Int) throws -> Int? {
        guard let (commits, last) = try db.first(
            "SELECT commits, (SELECT coalesce(max(rowid), 0) FROM writes) FROM journal_commits WHERE id = 1", { ($0.int(0), $0.int(1)) })
        else { return nil }
        guard last <= before else { return commits + last }
        let raise = before - last + 1
        try db.run("UPDATE journal_commits SET commits = commits + ?1 WHERE id = 1", [.int(raise)])
        return commits + raise + last
    }

    /// Makes the table and its row (a new random id unless `journalID`), if missing, in
    /// one write transaction; returns the file's count.
    static func ensureCommitTable(_ sqlite: SQLiteDatabase, journalID: String? = nil) throws -> CommitCount {
        try sqlite.transaction {
            try sqlite.exec(commitTableSQL)
            let id = journalID ?? randomJournalID()
            _ = try sqlite.run("INSERT OR IGNORE INTO journal_commits (id, journal_id, commits) VALUES (1, ?1, 0)", [.text(id)])
        }
        return try fileCommits(sqlite) ?? CommitCount(journalID: journalID ?? "", commits: 0, path: nil)
    }

    static func randomJournalID() -> String {
        Hex.encode((0..<16).map { _ in UInt8.random(in: 0...255) })
    }

    /// Compares the side record with the file (read in that order: see above) and
    /// returns the log that keeps the side record from now on. Runs before the schema is
    /// migrated (a migration would write the log again and bury what was lost).
    /// - Throws: `JournalError(.historyLost)` saying what was lost and what to do.
    static func verifyHistory(path: String, _ sqlite: SQLiteDatabase) throws -> JournalCommitLog {
        let side = JournalCommitLog.read(commitRecordPath(path))
        var file = try fileCommits(sqlite)
        switch (side, file) {
        case (.damaged(let reason), _):
            throw historyError(path, """
                its commit record \(commitRecordPath(path)) is damaged (\(reason)), so whether the journal lost \
                committed history cannot be told
                """)
        case (.present(let record), let counted?):
            if record.journalID != counted.journalID {
                throw historyError(path, """
                    it is not the journal this machine last wrote: its commit record \(commitRecordPath(path)) belongs \
                    to another journal file (the file was replaced, perhaps by an older copy, and what was recorded \
                    since is missing)
                    """)
            }
            if counted.commits < record.commits {
                throw lostCommits(path, recorded: record.commits, held: counted.commits)
            }
        case (.present(let record), nil):
            if record.commits > 0 { throw lostCommits(path, recorded: record.commits, held: 0) }
            file = try ensureCommitTable(sqlite, journalID: record.journalID)
        case (.missing, let counted?):
            // A journal copied or moved without its record (a backup, `mv` to another
            // name) is adopted where it now is; at the path it was last used, a missing
            // record could hide a loss.
            if counted.path == path {
                throw historyError(path, """
                    its commit record \(commitRecordPath(path)) is missing (the journal's history mark is \
                    \(counted.commits)), so whether the journal lost committed history cannot be told
                    """)
            }
        case (.missing, nil):
            file = try ensureCommitTable(sqlite)
        }
        // The record first, whole (another process opening meanwhile, or after a kill,
        // finds it complete or missing, never empty), then the path that makes a missing
        // record an alarm.
        if case .missing = side {
            try JournalCommitLog.createIfMissing(commitRecordPath(path), journalID: file?.journalID ?? "", commits: file?.commits ?? 0)
        }
        if file?.path != path {
            _ = try sqlite.transaction { try sqlite.run("UPDATE journal_commits SET journal_path = ?1 WHERE id = 1", [.text(path)]) }
            // Into the file now (once per move), not at the next checkpoint: a log deleted
            // with the record before then would make the file an adoptable copy again.
            try? sqlite.exec("PRAGMA wal_checkpoint(PASSIVE)")
        }
        return try JournalCommitLog(path: commitRecordPath(path), journalID: file?.journalID ?? "")
    }

    static func lostCommits(_ path: String, recorded: Int, held: Int) -> JournalError {
        historyError(path, """
            it has lost committed history: its history mark was \(recorded) after its last commit, the file holds \
            \(held) (its write-ahead log \(path)-wal was deleted or damaged after its last commits, or the machine \
            lost power before they reached the disk); runs, writes and fires recorded in them are forgotten
            """)
    }

    static func historyError(_ path: String, _ what: String) -> JournalError {
        JournalError(.historyLost, """
            the journal \(path): \(what). Nothing was run: a run it forgot would be started afresh and not resumed. \
            Keep a copy of its files (cp -p \(path)* SOMEWHERE/), then either restore them from a backup, or accept \
            the loss with hubscript runs repair --accept-loss (check on the Hub what runs of that time did).
            """)
    }

    // MARK: Accepting a loss

    /// What `acceptLoss` found and did.
    public struct AcceptedLoss: Sendable, Equatable {
        /// The history mark the side record held (nil: it was missing or damaged).
        public let recorded: Int?
        /// The history mark the file holds, which the side record now says.
        public let held: Int
        /// Where a copy of the damaged log was kept, if there was one.
        public let logCopy: String?
    }

    /// `hubscript runs repair --accept-loss`: makes the journal at `path` usable again
    /// after `verifyHistory` refused it. The file must pass `PRAGMA quick_check`; its
    /// write-ahead log, if any, is first copied to `<path>-wal.lost-<seconds since
    /// 1970>` (the next write would overwrite what a damaged log still holds); then the
    /// side record is set to the file's history mark (and its id).
    public static func acceptLoss(path: String) throws -> AcceptedLoss {
        guard FileManager.default.fileExists(atPath: path) else {
            throw JournalError(.historyLost, "there is no journal at \(path): nothing to repair")
        }
        let recorded: Int? = if case .present(let record) = JournalCommitLog.read(commitRecordPath(path)) { record.commits } else { nil }
        var logCopy: String?
        if (size(path + "-wal") ?? 0) > 0 {
            // `-wal.lost-<seconds>`, or `-2`, `-3`… after it when one of that second exists.
            let base = path + "-wal.lost-\(time(nil))"
            var copy = base
            var n = 1
            while FileManager.default.fileExists(atPath: copy) && n < 1000 {
                n += 1
                copy = base + "-\(n)"
            }
            do { try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy) } catch {
                throw JournalError(.historyLost, """
                    cannot keep a copy of the journal's log \(path)-wal at \(copy) (\(FileErrorText.reason(error, path: copy))); \
                    nothing was changed. Copy it yourself, move it aside and run again.
                    """)
            }
            logCopy = copy
        }
        let journal: Journal
        do { journal = try Journal(path: path, migrating: false) } catch let error as JournalError
            where error.code == .sqlite && (error.message.contains("not a database") || error.message.contains("malformed")) {
            throw malformed(path, error.message.contains("not a database") ? "file is not a database" : "database disk image is malformed")
        }
        try journal.quickCheck()
        guard let sqlite = journal.sqlite else { throw JournalError(.historyLost, "the journal \(path) is not a SQLite file") }
        let file = try mappingStoreErrors { try ensureCommitTable(sqlite) }
        try mappingStoreErrors { try journal.db.migrate() }
        try JournalCommitLog.createIfMissing(commitRecordPath(path), journalID: file.journalID, commits: file.commits)
        let log = try JournalCommitLog(path: commitRecordPath(path), journalID: file.journalID)
        log.overwrite(file.commits)
        return AcceptedLoss(recorded: recorded, held: file.commits, logCopy: logCopy)
    }
}

/// A journal's id and count of commits (and, in the file, the path it was last opened at).
struct CommitCount: Equatable, Sendable {
    let journalID: String
    let commits: Int
    var path: String? = nil
}
