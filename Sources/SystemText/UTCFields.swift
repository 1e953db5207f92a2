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
        let (days, secondOfDay) = Self.floorDivide(seconds, 86_400)
        (hour, minute, second) = (Int(secondOfDay / 3600), Int(secondOfDay % 3600 / 60), Int(secondOfDay % 60))
        // Howard Hinnant's civil_from_days: eras of 400 years (146 097 days) counted
        // from 0000-03-01, so the leap day falls at the end of each year.
        let shifted = days + 719_468
        let (era, dayOfEra) = Self.floorDivide(shifted, 146_097)
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        day = Int(dayOfYear - (153 * monthFromMarch + 2) / 5 + 1)
        month = Int(monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9)
        year = Int(yearOfEra + era * 400) + (month <= 2 ? 1 : 0)
    }

    /// `2026-11-30T14:22:33Z`.
    public var description: String {
        let p = DecimalText.padded
        return p(year, 4) + "-" + p(month, 2) + "-" + p(day, 2) + "T" + p(hour, 2) + ":" + p(minute, 2) + ":" + p(second, 2) + "Z"
    }

    /// Quotient rounded down and a remainder in 0..<divisor (`divisor` > 0).
    static func floorDivide(_ n: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let r = n % divisor
        return r < 0 ? (n / divisor - 1, r + divisor) : (n / divisor, r)
    }
}
