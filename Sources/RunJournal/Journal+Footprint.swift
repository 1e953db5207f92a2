import Foundation

/// What the operator endpoints read from the journal (`/readyz`, `/metrics`): whether it
/// answers, how much space it takes, and how far back its runs go.
extension Journal {
    /// Throws unless the journal answers a query: on SQLite its file must still be at
    /// its path (a deleted file would go on answering from the open handle), on
    /// PostgreSQL the server must answer (a dropped connection is reopened first).
    public func checkReachable() throws {
        if case .sqlite(let path) = location, path != ":memory:", !FileManager.default.fileExists(atPath: path) {
            throw JournalError(.sqlite, "the journal file \(path) is gone (deleted or moved): restart the command to make a new one, or put it back")
        }
        _ = try reading { db in try db.first("SELECT 1 FROM runs LIMIT 1") { $0.int(0) } }
    }

    /// The journal's size in bytes: on SQLite its file, write-ahead log and shared-memory
    /// file; on PostgreSQL every table of its schema with indexes and TOAST
    /// (`pg_total_relation_size`).
    public func storageBytes() throws -> Int64 {
        switch location {
        case .sqlite(let path):
            guard path != ":memory:" else { return 0 }
            guard let main = Self.fileSize(path) else {
                throw JournalError(.sqlite, "the journal file \(path) is gone (deleted or moved)")
            }
            return main + (Self.fileSize(path + "-wal") ?? 0) + (Self.fileSize(path + "-shm") ?? 0)
        case .postgres:
            return try reading { db in
                try db.first("""
                    SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c
                    JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
                    """) { Int64($0.int(0)) } ?? 0
            }
        }
    }

    /// When the oldest run still in the journal started (nil: no run).
    public func oldestRunStart() throws -> Date? {
        try reading { db in try db.first("SELECT min(started_at) FROM runs") { Journal.date($0.intOrNil(0)) } ?? nil }
    }

    private static func fileSize(_ path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int64(info.st_size)
    }
}
