import SystemText
/// An error from the journal.
public typealias JournalError = CodedError<JournalErrorDomain>
public enum JournalErrorDomain: CodedErrorDomain {}

extension CodedError.Code where Domain == JournalErrorDomain {
    /// SQLite refused an operation (open, statement, constraint, busy).
    public static var sqlite: Self { Self(rawValue: "journal_sqlite") }
    /// The PostgreSQL journal failed: the server is out of reach, refused the login, or
    /// refused a statement (the message says which, and never shows a password).
    public static var postgres: Self { Self(rawValue: "journal_postgres") }
    /// The file's schema is newer than this hubscript understands.
    public static var schemaTooNew: Self { Self(rawValue: "journal_schema_too_new") }
    /// A write was recorded for a run that the journal does not hold.
    public static var unknownRun: Self { Self(rawValue: "journal_unknown_run") }
    /// A new run's id was taken by another run started at the same moment
    /// (`Journal.startNewRun`); nothing was recorded.
    public static var runIDTaken: Self { Self(rawValue: "journal_run_id_taken") }
    /// A value the journal cannot store as given (text with a NUL byte, which both
    /// backends would cut there); nothing was recorded.
    public static var unstorableText: Self { Self(rawValue: "journal_unstorable_text") }
    /// The journal lost committed history (its write-ahead log deleted or damaged, the
    /// file replaced by another), or its record of commits is missing or damaged, so
    /// that cannot be told; `hubscript runs repair --accept-loss` accepts it.
    public static var historyLost: Self { Self(rawValue: "journal_history_lost") }
    /// A stored value could not be read back (corrupt or foreign data).
    public static var corrupt: Self { Self(rawValue: "journal_corrupt") }
}
