/// An error from reading a schedule, a time zone, a job definition or a run id.
///
/// Callers branch on `code` (extensible: new codes do not break a `switch` with a
/// `default`); `message` is for people: it quotes what was written and says what is
/// allowed, e.g. `cron "61 * * * *": minute 61 is out of range 0-59`.
public struct SchedulerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable, machine-readable kind of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let name: String
        public init(_ name: String) { self.name = name }
        public var description: String { name }

        /// Not five fields, or an empty one.
        public static let cronFieldCount = Code("cron_field_count")
        /// A value outside its field's range (`minute 61`).
        public static let cronOutOfRange = Code("cron_out_of_range")
        /// A word that is not a month or weekday name, or a name in a numeric field.
        public static let cronUnknownName = Code("cron_unknown_name")
        /// A step of 0, too large, not a number, or on a single value.
        public static let cronStep = Code("cron_step")
        /// A range whose start comes after its end (`5-1`).
        public static let cronReversedRange = Code("cron_reversed_range")
        /// Anything else a field cannot be read as (`1,,2`, `1-`, `5x`).
        public static let cronSyntax = Code("cron_syntax")
        /// An `@` word other than the supported macros.
        public static let cronUnknownMacro = Code("cron_unknown_macro")
        /// A time zone the system's tz database does not know.
        public static let unknownTimeZone = Code("unknown_time_zone")
        /// A job definition that is missing a field, has one of the wrong type or value,
        /// or has one that is not known.
        public static let invalidJob = Code("invalid_job")
        /// Text that is not `JOB@YYYY-MM-DDThh:mm:ssZ`.
        public static let invalidRunID = Code("invalid_run_id")
    }

    public let code: Code
    public let message: String
    public var description: String { message }
}
