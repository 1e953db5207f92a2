import PostgresKit

/// Where a journal lives: a SQLite file (the default: `journal/journal.sqlite` in the
/// state directory), or a PostgreSQL database named by the configuration's
/// `journal = "postgresql://…"`.
public enum JournalLocation: Sendable, Equatable, CustomStringConvertible {
    case sqlite(path: String)
    case postgres(PostgresURL)

    /// The file's path, or the URL with its password masked.
    public var description: String {
        switch self {
        case .sqlite(let path): path
        case .postgres(let url): url.redacted
        }
    }

    /// Whether several hosts can share it.
    public var isShared: Bool {
        if case .postgres = self { return true }
        return false
    }
}
