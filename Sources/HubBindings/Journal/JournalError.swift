/// An error from the journal: a code callers may branch on and a message that says
/// what went wrong and, where it can, what to do.
public struct JournalError: Error, Sendable, CustomStringConvertible, Equatable {
    /// An extensible error code.
    public struct Code: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// SQLite refused an operation (open, statement, constraint, busy).
        public static let sqlite = Code(rawValue: "journal_sqlite")
        /// The file's schema is newer than this hubscript understands.
        public static let schemaTooNew = Code(rawValue: "journal_schema_too_new")
        /// A write was recorded for a run that the journal does not hold.
        public static let unknownRun = Code(rawValue: "journal_unknown_run")
        /// A stored value could not be read back (corrupt or foreign data).
        public static let corrupt = Code(rawValue: "journal_corrupt")
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
