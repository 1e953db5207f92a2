import Foundation
import SQLiteKit

/// Facts about the journal as a whole (`journal_meta`), and giving space back.
extension Journal {
    func meta(_ name: String) throws -> String? {
        try reading { db in try db.first("SELECT value FROM journal_meta WHERE name = ?1", [.text(name)]) { $0.text(0) } }
    }

    func setMeta(_ name: String, _ value: String) throws {
        try transaction { db in
            _ = try db.run("""
                INSERT INTO journal_meta (name, value) VALUES (?1, ?2)
                ON CONFLICT (name) DO UPDATE SET value = excluded.value
                """, [.text(name), .text(value)])
        }
    }

    /// The pages a vacuum step frees at most (4 MiB of 4 KiB pages), so no step holds
    /// the write lock long.
    static let vacuumStepPages = 1024

    /// On a SQLite journal with `auto_vacuum = INCREMENTAL`, returns its free pages to
    /// the file system, a step at a time, then truncates the write-ahead log if no
    /// reader holds it. Returns the bytes the file shrank by (0 on PostgreSQL, or on a
    /// file made without incremental vacuum).
    func giveSpaceBack() throws -> Int64 {
        guard let sqlite, path != ":memory:" else { return 0 }
        return try Journal.mappingStoreErrors {
            try locked { _ in
                let mode = try sqlite.first("PRAGMA auto_vacuum") { $0.int(0) } ?? 0
                guard mode == 2 else { return 0 }
                let pageSize = Int64(try sqlite.first("PRAGMA page_size") { $0.int(0) } ?? 4096)
                let before = Int64(try sqlite.first("PRAGMA page_count") { $0.int(0) } ?? 0)
                var free = try sqlite.first("PRAGMA freelist_count") { $0.int(0) } ?? 0
                while free > 0 {
                    try sqlite.exec("PRAGMA incremental_vacuum(\(Journal.vacuumStepPages))")
                    let left = try sqlite.first("PRAGMA freelist_count") { $0.int(0) } ?? 0
                    if left >= free { break }
                    free = left
                }
                try? sqlite.query("PRAGMA wal_checkpoint(TRUNCATE)")
                let after = Int64(try sqlite.first("PRAGMA page_count") { $0.int(0) } ?? 0)
                return max(0, before - after) * pageSize
            }
        }
    }
}

/// A run's export folder, as a prune measures and removes it.
enum ExportFolder {
    /// Whether `folder` is the run's own export folder, `root/<run id>`: one path
    /// component under `root` (an id with a `/`, or `.` or `..`, never names one).
    static func isOwn(_ folder: String, runID: String, root: String) -> Bool {
        !runID.isEmpty && runID != "." && runID != ".." && !runID.contains("/") && !runID.contains("\0")
            && folder == root + "/" + runID
    }

    /// The bytes of the regular files under `path` (0 if it is missing).
    static func bytes(_ path: String) -> Int64 {
        guard let walker = FileManager.default.enumerator(atPath: path) else { return 0 }
        var total: Int64 = 0
        while let name = walker.nextObject() as? String {
            var info = stat()
            if lstat(path + "/" + name, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG { total += Int64(info.st_size) }
        }
        return total
    }

    /// Removes the folder; true if it existed and is gone now.
    static func remove(_ path: String) -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0 else { return false }
        return (try? FileManager.default.removeItem(atPath: path)) != nil
    }
}
