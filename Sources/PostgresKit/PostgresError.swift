/// A failed PostgreSQL call: what kind of failure, the server's SQLSTATE when it sent
/// one, and a message that never holds the URL's password.
public struct PostgresError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The URL is not one libpq (or hubscript) accepts.
        case badURL
        /// No connection: the server is down or unreachable, or refused the login.
        case connection
        /// A statement failed (`sqlState` says why).
        case statement
    }

    public let kind: Kind
    /// The five-character SQLSTATE (e.g. `23505`, `57P01`), if the server sent one.
    public let sqlState: String?
    public let message: String

    public init(_ kind: Kind, _ message: String, sqlState: String? = nil) {
        self.kind = kind
        self.message = message
        self.sqlState = sqlState
    }

    public var description: String { message + (sqlState.map { " (SQLSTATE \($0))" } ?? "") }

    /// The connection was lost or the server is shutting down (class 08, 57P0x): the
    /// statement may be retried on a new connection.
    public var isConnectionLost: Bool {
        kind == .connection || (sqlState.map { $0.hasPrefix("08") || $0.hasPrefix("57P") } ?? false)
    }
}
