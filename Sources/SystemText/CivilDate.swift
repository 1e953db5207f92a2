/// Dates of the proleptic Gregorian calendar counted in days from 1970-01-01, as POSIX
/// time counts them (every day 86 400 s, no leap seconds). The one place this arithmetic
/// lives: UTC fields, RFC 3339 text, the sandbox's timestamps and cron's wall clock all
/// use it.
///
/// The conversions are Howard Hinnant's `days_from_civil` / `civil_from_days`: eras of
/// 400 years (146 097 days) counted from 0000-03-01, so the leap day falls at the end of
/// each year. They are exact for every date whose day count fits an `Int`, before year 1
/// included (year 0 is 1 BC).
public enum CivilDate {
    /// Whether `year` has a 29 February.
    public static func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    /// The number of days of `month` (1–12) in `year`.
    public static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days from 1970-01-01 to `year`-`month`-`day` (negative: before it). `month` is
    /// 1–12; a `day` past the month's end counts on into the next month.
    public static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = floorDivide(y, 400).quotient
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date `days` after 1970-01-01 (the inverse of `days(year:month:day:)`).
    public static func date(days: Int) -> (year: Int, month: Int, day: Int) {
        let (era, dayOfEra) = floorDivide(days + 719_468, 146_097)
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Seconds since the epoch split into whole days since 1970-01-01 and the second of
    /// that day (0..<86 400), also for negative `seconds`.
    public static func dayAndSecond(_ seconds: Int) -> (days: Int, secondOfDay: Int) {
        let (days, second) = floorDivide(seconds, 86_400)
        return (days, second)
    }

    /// The quotient rounded down and a remainder in 0..<`divisor` (`divisor` > 0).
    public static func floorDivide(_ n: Int, _ divisor: Int) -> (quotient: Int, remainder: Int) {
        let r = n % divisor
        return r < 0 ? (n / divisor - 1, r + divisor) : (n / divisor, r)
    }
}
