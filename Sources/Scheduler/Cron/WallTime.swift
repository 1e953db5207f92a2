import SystemText

/// A minute of wall-clock time with no zone attached: a proleptic Gregorian date and a
/// time of day. Its `seconds` count from 1970-01-01 00:00 on the same wall clock, so a
/// zone's offset turns them into an instant (see `ZoneClock`).
struct WallTime: Hashable, Comparable, Sendable {
    var year: Int
    var month: Int
    var day: Int
    var hour: Int
    var minute: Int

    init(year: Int, month: Int, day: Int, hour: Int, minute: Int) {
        (self.year, self.month, self.day, self.hour, self.minute) = (year, month, day, hour, minute)
    }

    /// The minute that contains wall-clock second `seconds`.
    init(seconds: Int64) {
        let (days, secondOfDay) = CivilDate.dayAndSecond(Int(seconds))
        let (year, month, day) = CivilDate.date(days: days)
        self.init(year: year, month: month, day: day, hour: secondOfDay / 3600, minute: secondOfDay / 60 % 60)
    }

    static func < (a: WallTime, b: WallTime) -> Bool {
        (a.year, a.month, a.day, a.hour, a.minute) < (b.year, b.month, b.day, b.hour, b.minute)
    }

    var seconds: Int64 { Int64(dayNumber) * 86_400 + Int64(hour * 3600 + minute * 60) }

    /// 0 for Sunday … 6 for Saturday (1970-01-01 was a Thursday).
    var weekday: Int {
        let r = (dayNumber + 4) % 7
        return r < 0 ? r + 7 : r
    }

    /// Days since 1970-01-01.
    private var dayNumber: Int { CivilDate.days(year: year, month: month, day: day) }

    // MARK: Moving by calendar fields (for the schedule search)

    /// The first (`forward`) or last minute of `month` in this year.
    mutating func enterMonth(_ month: Int, forward: Bool) {
        self.month = month
        day = forward ? 1 : Self.daysIn(month: month, year: year)
        (hour, minute) = forward ? (0, 0) : (23, 59)
    }

    /// The first minute of the next year, or the last minute of the previous one.
    mutating func enterYear(forward: Bool) {
        year += forward ? 1 : -1
        enterMonth(forward ? 1 : 12, forward: forward)
    }

    /// The first minute of the next day, or the last minute of the previous one.
    mutating func stepDay(forward: Bool) {
        if forward, day < Self.daysIn(month: month, year: year) {
            (day, hour, minute) = (day + 1, 0, 0)
        } else if !forward, day > 1 {
            (day, hour, minute) = (day - 1, 23, 59)
        } else if forward ? month == 12 : month == 1 {
            enterYear(forward: forward)
        } else {
            enterMonth(month + (forward ? 1 : -1), forward: forward)
        }
    }

    /// The first minute of the next hour, or the last minute of the previous one.
    mutating func stepHour(forward: Bool) {
        if forward ? hour == 23 : hour == 0 {
            stepDay(forward: forward)
        } else {
            (hour, minute) = (hour + (forward ? 1 : -1), forward ? 0 : 59)
        }
    }

    // MARK: Calendar arithmetic

    static func daysIn(month: Int, year: Int) -> Int { CivilDate.daysIn(month: month, year: year) }
}
