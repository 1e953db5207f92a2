import Foundation
import SQLiteKit

extension Journal {
    /// Opens the journal at `path` for a run (new or resumed) after checking it:
    /// - a 0-byte file (with no write-ahead log beside it holding its data) is refused,
    ///   not silently given a new schema: it was truncated or made by something else;
    /// - an existing file must pass SQLite's `PRAGMA quick_check` (when `quickCheck`;
    ///   it reads the whole file, so listing runs skips it).
    ///
    /// Throws `JournalError(.corrupt)` with what to do (the CLI exits with code 2).
    public static func openChecked(path: String, quickCheck: Bool = true) throws -> Journal {
        let manager = FileManager.default
        let existed = manager.fileExists(atPath: path)
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

    private static func size(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue
    }
}
