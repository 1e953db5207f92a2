import Foundation
import SystemText
import HubClient
import PostgresKit
import ScriptHost
import RunJournal

/// The configuration file's `journal` key: where the journal lives when it is not the
/// SQLite file in the state directory.
///
/// ```lua
/// journal = "postgresql://hubscript@db.internal/hubscript"   -- or postgres://…
/// ```
///
/// Contracts: a `postgresql://` or `postgres://` URL (libpq's form: host, port, user,
/// password, database, `?sslmode=…`, `?host=/socket/folder`, `?options=-csearch_path=…`)
/// selects the PostgreSQL journal; a missing key keeps SQLite. Anything else is refused
/// with what to write. No message shows the URL's password (PGPASSWORD or ~/.pgpass
/// keep it out of the file altogether).
public enum JournalConfig {
    /// The PostgreSQL URL of the file's `journal` key; nil when it has none.
    static func parse(_ value: ScriptValue, file: URL) throws -> PostgresURL? {
        guard case .object(let top) = value, let setting = top["journal"] else { return nil }
        let usage = "journal must be a PostgreSQL URL such as \"postgresql://user@host/database\" (leave it out to keep the SQLite journal in the state directory)"
        guard let text = setting.stringValue else { throw HubConfigError("config \(file.path): \(usage)") }
        do { return try PostgresURL(text) } catch let error as PostgresError {
            // The error shows the URL with its password masked.
            throw HubConfigError("config \(file.path): \(usage); \(error.message)")
        }
    }
}
