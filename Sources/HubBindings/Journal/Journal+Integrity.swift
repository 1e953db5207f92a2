import Foundation
import SQLiteKit

extension Journal {
    /// Opens the journal at `path` for a run (new or resumed) after checking it:
    /// - a 0-byte file (with no write-ahead log beside it holding its data) is refused,
    ///   not silently given a new schema: it was truncated or made by something else;
    /// - an existing file must pass SQLite's `PRAGMA quick_check` (when `quickCheck`;
    ///   it reads the whole file, so listing runs skips it).
    ///
    /// A missing journal is made whole under a temporary name and linked into place
    /// (never replacing one another process made first), so no process ever sees a
    /// half-created, 0-byte journal.
    ///
    /// Throws `JournalError(.corrupt)` with what to do (the CLI exits with code 2).
    public static func openChecked(path: String, quickCheck: Bool = true) throws -> Journal {
        let manager = FileManager.default
        let existed = manager.fileExists(atPath: path)
        if !existed { try createInPlace(path) }
        if existed, size(path) == 0, (size(path + "-wal") ?? 0) == 0 {
            throw JournalError(.corrupt, """
                the journal \(path) is empty (0 bytes): it was truncated or replaced, and the runs it \
                recorded are lost. Move it aside (mv \(path) \(path).empty) and run again to start a new journal.
                """)
        }
        let journal: Journal
        do { journal = try Journal(path: path) } catch let error as JournalError
            where error.code == .sqlite && (error.message.contains("not a database") || error.message.contains("malformed")) {
            throw malformed(path, error.message.contains("not a database") ? "file is not a database" : "database disk image is malformed")
        }
        if existed && quickCheck { try journal.quickCheck() }
        return journal
    }

    /// Runs `PRAGMA quick_check`; throws `JournalError(.corrupt)` unless SQLite answers `ok`.
    public func quickCheck() throws {
        var problems: [String] = []
        do {
            try Journal.mappingSQLiteErrors {
                try locked { db in try db.query("PRAGMA quick_check(5)") { problems.append($0.text(0)) } }
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
    /// checkpointed and removed when it closes), then links it to `path` unless a file is
    /// already there.
    private static func createInPlace(_ path: String) throws {
        let temporary = path + ".new-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer {
            for suffix in ["", "-wal", "-shm"] { unlink(temporary + suffix) }
        }
        do { _ = try Journal(path: temporary) }   // closed (and checkpointed) at once
        if link(temporary, path) != 0 && errno != EEXIST {
            throw JournalError(.sqlite, "cannot create the journal \(path): \(String(cString: strerror(errno)))")
        }
    }

    private static func size(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue
    }
}
