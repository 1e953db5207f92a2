/// The UTC calendar fields of a time, by arithmetic on the proleptic Gregorian calendar
/// (every day 86 400 s, as POSIX time counts them). glibc's `gmtime_r` reads
/// /etc/localtime on its first call even for UTC (`tzset`): seven system calls on the
/// start of every run, which only needed the run id's date.
public struct UTCFields: Sendable, Equatable, CustomStringConvertible {
    public var year, month, day, hour, minute, second: Int

    public init(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        (self.year, self.month, self.day, self.hour, self.minute, self.second) = (year, month, day, hour, minute, second)
    }

    /// The fields of `seconds` since 1970-01-01T00:00:00Z (negative: before it), for
    /// any `seconds` whose year fits an Int (all of them: |seconds| / 31 556 952 years).
    public init(secondsSince1970 seconds: Int64) {
        let (days, secondOfDay) = CivilDate.dayAndSecond(Int(seconds))
        (hour, minute, second) = (secondOfDay / 3600, secondOfDay % 3600 / 60, secondOfDay % 60)
        (year, month, day) = CivilDate.date(days: days)
    }

    /// `2026-11-30T14:22:33Z`.
    public var description: String {
        let p = DecimalText.padded
        return p(year, 4) + "-" + p(month, 2) + "-" + p(day, 2) + "T" + p(hour, 2) + ":" + p(minute, 2) + ":" + p(second, 2) + "Z"
    }
}
