import Foundation
import SystemText
import SQLiteKit

extension Journal {
    /// When `openChecked` runs SQLite's `PRAGMA quick_check`, which reads the whole file,
    /// so its time grows with the journal (scripts/bench-journal; docs/performance.md).
    public enum IntegrityCheck: Sendable {
        /// Always: before resuming a run.
        case always
        /// Unless the journal is exactly as a process left it when it closed it cleanly
        /// (`closedCleanly`): before a new run.
        case unlessClosedCleanly
        /// Never (listing runs).
        case skip
    }

    /// Opens the journal at `path` for a run (new or resumed) after checking it:
    /// - a 0-byte file is refused (whatever its write-ahead log holds),
    ///   not silently given a new schema: it was truncated or made by something else;
    /// - a file that lost committed history (its log deleted or damaged) is refused,
    ///   whatever `check` says (`verifyHistory`), and from then on each commit is
    ///   counted beside it;
    /// - an existing file must pass SQLite's `PRAGMA quick_check`, as `check` says.
    ///
    /// A missing journal is made whole under a temporary name and linked into place
    /// (never replacing one another process made first), so no process ever sees a
    /// half-created, 0-byte journal.
    ///
    /// Throws `JournalError(.corrupt)` with what to do (the CLI exits with code 2).
    public static func openChecked(path: String, check: IntegrityCheck = .unlessClosedCleanly) throws -> Journal {
        let manager = FileManager.default
        let existed = manager.fileExists(atPath: path)
        if !existed { try createInPlace(path) }
        // Never legitimately 0 bytes: a new journal is made whole (schema in the file,
        // not only in its log) before it is linked into place.
        if existed, size(path) == 0 {
            throw JournalError(.corrupt, """
                the journal \(path) is empty (0 bytes): it was truncated or replaced, and the runs it \
                recorded are lost. Move it aside (mv \(path) \(path).empty) and run again to start a new journal.
                """)
        }
        keepPrivate(path)
        let clean = closedCleanly(path)   // before opening: opening makes the log
        let journal: Journal
        do {
            journal = try Journal(path: path, migrating: false)
            if let sqlite = journal.sqlite, path != ":memory:" {
                let log = try mappingStoreErrors { try verifyHistory(path: path, sqlite) }
                try mappingStoreErrors { try journal.db.migrate() }
                journal.locked { _ in journal.commitLog = log }
            }
        } catch let error as JournalError
            where error.code == .sqlite && (error.message.contains("not a database") || error.message.contains("malformed")) {
            throw malformed(path, error.message.contains("not a database") ? "file is not a database" : "database disk image is malformed")
        }
        switch check {
        case .always where existed: try journal.quickCheck()
        case .unlessClosedCleanly where existed && !clean: try journal.quickCheck()
        case .skip where existed && !clean: return journal   // not checked: leaves no marker
        default: break
        }
        journal.vouchesAtClose = true
        return journal
    }

    /// Opens the journal at `location` for a run: `openChecked(path:check:)` for a
    /// SQLite file; a PostgreSQL journal is connected to (its tables created if missing)
    /// and needs no file check — the server keeps its own integrity.
    /// Throws `JournalError` with what to do (the CLI exits with code 2).
    public static func openChecked(_ location: JournalLocation, check: IntegrityCheck = .unlessClosedCleanly) throws -> Journal {
        switch location {
        case .sqlite(let path): try openChecked(path: path, check: check)
        case .postgres(let url): try Journal(postgres: url)
        }
    }

    /// `quickCheck` true: `.always`; false: `.skip`.
    public static func openChecked(path: String, quickCheck: Bool) throws -> Journal {
        try openChecked(path: path, check: quickCheck ? .always : .skip)
    }

    // MARK: Closed cleanly

    /// Whether the journal at `path` is exactly as a process left it when it closed it
    /// cleanly: the marker that process wrote (`<path>-closed`: device, inode, size,
    /// modification and change times of the file and of its write-ahead log) matches
    /// both. A process killed or crashed writes no marker (or leaves one its later
    /// writes made stale), and anything that writes the file or the log afterwards
    /// (another hubscript, or something else) changes their times: both mean "check it".
    static func closedCleanly(_ path: String) -> Bool {
        // Only a small regular file can be a marker: a FIFO, a device or a link planted in
        // its place must neither block the open nor be read without end.
        var status = stat()
        guard lstat(path + "-closed", &status) == 0, (status.st_mode & S_IFMT) == S_IFREG,
              let stamp = closeStamp(path), let marker = try? FileBytes.read(path + "-closed", atMost: 4096) else {
            return false
        }
        return marker.elementsEqual(stamp.utf8)
    }

    /// The most a clean close leaves in the write-ahead log (bytes, about 64 pages):
    /// a longer log is checkpointed into the file and emptied first. The next open
    /// reads the whole log back, so this bounds what that costs.
    static let logKeptAtClose = 256 * 1024

    /// When this connection closes (if `vouchesAtClose`): a log longer than `logKeptAtClose` is checkpointed
    /// into the file and emptied (`wal_checkpoint(TRUNCATE)`, which fails if another
    /// connection still reads); a shorter one is left in place (the connection keeps
    /// it at close, `SQLiteDatabase.keepWriteAheadLogAtClose`: no fsync). Then the
    /// marker of `closedCleanly` is written beside it. Best effort: a journal without a
    /// valid marker is just checked at its next open.
    func markClosedCleanly(keepingLogUpTo limit: Int = Journal.logKeptAtClose) {
        guard let sqlite, path != ":memory:" else { return }
        if (Journal.size(path + "-wal") ?? 0) > limit {
            var result: (busy: Int, frames: Int)?
            try? locked { _ in try sqlite.query("PRAGMA wal_checkpoint(TRUNCATE)") { result = ($0.int(0), $0.int(1)) } }
            guard let result, result.busy == 0, result.frames == 0, (Journal.size(path + "-wal") ?? 0) == 0 else { return }
        }
        guard let stamp = Journal.closeStamp(path) else { return }
        // Rewritten in place, not synced, neither cut to 0 bytes nor replaced by a rename
        // (on ext4 both make the file flush to disk first, which every run would wait
        // for). A marker torn or lost by a crash or a power cut only fails to match,
        // which costs the next run a check.
        let fd = open(path + "-closed", O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let bytes = Array(stamp.utf8)
        let written = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        guard written == bytes.count, ftruncate(fd, off_t(bytes.count)) == 0 else {
            _ = ftruncate(fd, 1)   // unmatchable; a later close writes it whole again
            return
        }
    }

    /// The marker's text: `stamp` of the file, then of its log (or `no log`).
    static func closeStamp(_ path: String) -> String? {
        guard let file = stamp(path) else { return nil }
        return file + (stamp(path + "-wal") ?? "no log\n")
    }

    /// `dev ino size mtime ctime` of `path` (nanoseconds), or nil.
    static func stamp(_ path: String) -> String? {
        var s = stat()
        guard stat(path, &s) == 0 else { return nil }
        return "\(s.st_dev) \(s.st_ino) \(s.st_size) \(s.st_mtim.tv_sec).\(s.st_mtim.tv_nsec) \(s.st_ctim.tv_sec).\(s.st_ctim.tv_nsec)\n"
    }

    /// Runs `PRAGMA quick_check`; throws `JournalError(.corrupt)` unless SQLite answers
    /// `ok`. Nothing to do on PostgreSQL.
    public func quickCheck() throws {
        guard let sqlite else { return }
        var problems: [String] = []
        do {
            try Journal.mappingStoreErrors {
                try locked { _ in try sqlite.query("PRAGMA quick_check(5)") { problems.append($0.text(0)) } }
            }
        } catch let error as JournalError {
            throw Journal.malformed(path, error.message.contains("malformed") ? "database disk image is malformed" : error.message)
        }
        guard problems == ["ok"] else {
            throw Journal.malformed(path, problems.joined(separator: "; "))
        }
    }

    static func malformed(_ path: String, _ detail: String) -> JournalError {
        JournalError(.corrupt, """
            the journal \(path) is damaged (SQLite: \(detail)); nothing was run. Move it aside \
            (mv \(path) \(path).damaged) and run again to start a new journal; runs recorded in it \
            cannot be resumed.
            """)
    }

    /// Creates the journal at a temporary path beside `path` (schema and all, its WAL
    /// checkpointed into the file before it closes), then links it to `path` unless a
    /// file is already there.
    ///
    /// A log under the journal's name with no journal beside it belongs to a journal
    /// that was moved aside or removed (a clean close leaves the log in place): SQLite
    /// would lay its pages over the new file (the old runs back, or a damaged journal
    /// from its first open). It is renamed `<path>-wal.orphaned-<seconds since 1970>`,
    /// and the old index and marker are removed, before the new journal is linked into
    /// place. Processes creating the journal at once take turns (`flock` on its folder),
    /// so none of them moves a log another one's new journal already writes.
    private static func createInPlace(_ path: String) throws {
        let temporary = path + ".new-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer {
            for suffix in ["", "-wal", "-shm", "-closed", "-commits"] { unlink(temporary + suffix) }
        }
        // Made 0600 before SQLite opens it: SQLite gives its log and index the file's mode.
        let made = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard made >= 0 else {
            throw JournalError(.sqlite, "cannot create the journal \(path): \(String(cString: strerror(errno)))")
        }
        _ = fchmod(made, 0o600)   // whatever the umask
        close(made)
        // The schema, the count of commits and the path it is used at, in the file; its
        // commit record beside it. From its first open a missing record is an alarm: a
        // first run's log deleted with the record is not taken for a new journal.
        let mark: CommitCount
        do {
            let made = try Journal(path: temporary)
            guard let sqlite = made.sqlite else { throw JournalError(.sqlite, "cannot create the journal \(path)") }
            mark = try mappingStoreErrors {
                let mark = try ensureCommitTable(sqlite)
                _ = try sqlite.transaction { try sqlite.run("UPDATE journal_commits SET journal_path = ?1 WHERE id = 1", [.text(path)]) }
                return mark
            }
            made.markClosedCleanly(keepingLogUpTo: 0)
        }
        try JournalCommitLog.createIfMissing(commitRecordPath(temporary), journalID: mark.journalID, commits: mark.commits)
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let folderFD = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folderFD >= 0 {
            while flock(folderFD, LOCK_EX) != 0 && errno == EINTR {}
        }
        defer { if folderFD >= 0 { close(folderFD) } }   // (closing drops the lock)
        guard !FileManager.default.fileExists(atPath: path) else { return }   // another process made it first
        if size(path + "-wal") != nil {
            let aside = path + "-wal.orphaned-\(time(nil))"
            if rename(path + "-wal", aside) != 0 && errno != ENOENT {
                throw JournalError(.sqlite, """
                    cannot create the journal \(path): a log of an earlier journal (\(path)-wal) is still there \
                    and cannot be moved aside (\(String(cString: strerror(errno)))); move it away and run again.
                    """)
            }
        }
        for suffix in ["-shm", "-closed", "-commits"] { unlink(path + suffix) }
        // The record first: a kill between the two leaves a record without a journal,
        // which the next creation replaces.
        if link(commitRecordPath(temporary), commitRecordPath(path)) != 0 {
            throw JournalError(.sqlite, "cannot create the journal's commit record \(commitRecordPath(path)): \(String(cString: strerror(errno)))")
        }
        if link(temporary, path) != 0 && errno != EEXIST {
            throw JournalError(.sqlite, "cannot create the journal \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// The journal (params, Hub responses) is its owner's alone: its file, log, index and
    /// markers are made 0600 (SQLite makes the log and index with the file's mode), and
    /// any of them found readable or writable by others (made by an older hubscript, or
    /// under a wide umask) is tightened, when this user owns it.
    static func keepPrivate(_ path: String) {
        guard path != ":memory:" else { return }
        let user = geteuid()
        for suffix in ["", "-wal", "-shm", "-closed", "-commits"] {
            var status = stat()
            guard lstat(path + suffix, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG,
                  status.st_uid == user, status.st_mode & 0o077 != 0 else { continue }
            _ = chmod(path + suffix, status.st_mode & 0o700)
        }
    }

    /// The size of the file at `path` (following links), or nil if there is none.
    static func size(_ path: String) -> Int? {
        var s = stat()
        return stat(path, &s) == 0 ? Int(s.st_size) : nil
    }
}
