import Foundation
import PostgresKit
import SQLiteKit

/// The ids of a journal's most recent runs, read without writing anything: for shell
/// completion, which must never create a journal, migrate one, or wait long.
public enum RecentRunIDs {
    /// Up to `limit` run ids of the journal at `location`, most recent first. A SQLite
    /// journal that does not exist gives none (it is not created), as does one that is not a
    /// regular file (a FIFO or a device); one that exists is
    /// opened read-only, and no file is made beside it (`readOnlyURI`). A PostgreSQL journal is read in a read-only session that gives
    /// up connecting after `connectTimeoutSeconds`. A journal that cannot be read (no
    /// runs table yet, locked, unreachable) gives none.
    public static func read(_ location: JournalLocation, limit: Int, connectTimeoutSeconds: Int = 2) -> [String] {
        let limit = max(0, limit)
        let sql = "SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT \(limit)"
        var ids: [String] = []
        switch location {
        case .sqlite(let path):
            guard isRegularFile(path),
                  let db = try? SQLiteDatabase(path: readOnlyURI(path), busyTimeoutMs: 200, readOnly: true) else { return [] }
            do { try db.query(sql) { ids.append($0.text(0)) } } catch { return [] }
        case .postgres(let url):
            guard let connection = try? PostgresConnection(url: url, connectTimeoutSeconds: connectTimeoutSeconds) else { return [] }
            defer { connection.close() }
            do {
                try connection.exec("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY; SET statement_timeout = '2s'")
                try connection.query(sql) { ids.append($0.text(0)) }
            } catch { return [] }
        }
        return ids
    }

    /// Whether `path` is a regular file (links followed). SQLite opens its files
    /// blocking: a FIFO or a device in the journal's place would hold completion forever.
    static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    /// How to open the SQLite journal at `path` without creating a file: as it is when
    /// its write-ahead log and shared-memory index exist (a journal keeps them at
    /// close), else as an immutable file — a read-only connection would otherwise make
    /// them, and without a log the database file holds every committed run.
    static func readOnlyURI(_ path: String) -> String {
        if isRegularFile(path + "-wal") && isRegularFile(path + "-shm") { return path }
        var escaped = ""
        for character in path {
            switch character {
            case "%": escaped += "%25"
            case "?": escaped += "%3f"
            case "#": escaped += "%23"
            default: escaped.append(character)
            }
        }
        return "file:" + escaped + "?immutable=1"
    }
}
