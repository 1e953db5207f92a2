import Foundation

/// A 5-field cron schedule in a time zone: when a job fires.
///
/// **Syntax** (minute hour day-of-month month day-of-week, separated by spaces or tabs):
/// each field is `*`, a value, a range `a-b`, a step `*/n` or `a-b/n`, or a comma list of
/// those. Months may be written JAN–DEC and weekdays SUN–SAT, in any case; weekday 0 and
/// 7 are both Sunday. A step is 1 up to the field's width (59 for minutes) and needs a
/// range or `*` (`5/10` is refused: write `5-59/10`). `@yearly` (`@annually`),
/// `@monthly`, `@weekly`, `@daily` (`@midnight`) and `@hourly` stand for their usual
/// five fields.
///
/// **Days** (Vixie cron's rule): when both day fields are restricted — neither starts
/// with `*` — a day matches if *either* matches (`0 0 13 * FRI`: every 13th and every
/// Friday). When one starts with `*` (including `*/n`), a day must match both.
///
/// **Time zones and DST**: the fields are read on the zone's wall clock. A wall time a
/// spring-forward skips fires once, at the first instant after the gap (02:30 in New York
/// on 2026-03-08 fires at 03:00 EDT; several skipped times fire together, once); a wall
/// time a fall-back repeats fires once, at its first occurrence (01:30 EDT, not again at
/// 01:30 EST) — so an hourly or finer schedule has no fires in the repeated hour. Every
/// fire is a whole second.
///
/// **Cost**: searches skip by field (month, then day, hour, minute) instead of testing
/// minutes, so a fire years away is found in a few hundred steps, and a schedule that can
/// never fire (`0 0 30 2 *`) is recognised when it is parsed and answers nil at once.
public struct CronSchedule: Sendable, Equatable, CustomStringConvertible {
    /// The expression as given, without surrounding white space.
    public let expression: String
    /// The zone whose wall clock the fields are read on.
    public let timeZone: TimeZone
    /// The zone's name as given (Foundation reports "UTC" as "GMT").
    public let timeZoneName: String
    let fields: CronFields
    private let clock: ZoneClock

    /// Parses `expression` for the zone named `timeZone` (a tz database name; UTC by
    /// default). Throws a `SchedulerError` naming the field and value at fault, or
    /// `.unknownTimeZone`.
    public init(_ expression: String, timeZone name: String = "UTC") throws {
        try self.init(expression, timeZone: Self.timeZone(named: name), name: name)
    }

    /// Parses `expression` for `timeZone`.
    public init(_ expression: String, timeZone: TimeZone) throws {
        try self.init(expression, timeZone: timeZone, name: timeZone.identifier)
    }

    private init(_ expression: String, timeZone: TimeZone, name: String) throws {
        let text = expression.trimmingCharacters(in: .whitespaces)
        self.expression = text
        self.timeZone = timeZone
        self.timeZoneName = name
        self.fields = try CronParser(expression: text).parse()
        self.clock = ZoneClock(timeZone: timeZone)
    }

    /// The zone named `identifier` in the system's tz database, or `.unknownTimeZone`.
    public static func timeZone(named identifier: String) throws -> TimeZone {
        guard let zone = TimeZone(identifier: identifier) else {
            throw SchedulerError(
                code: .unknownTimeZone,
                message: "unknown time zone \"\(identifier)\": use a name from the tz database, "
                    + "such as \"UTC\", \"Europe/Berlin\" or \"America/New_York\"")
        }
        return zone
    }

    public var description: String { "\(expression) (\(timeZoneName))" }

    /// Same expression text, same zone rules, same fields.
    public static func == (a: CronSchedule, b: CronSchedule) -> Bool {
        a.expression == b.expression && a.timeZone == b.timeZone && a.fields == b.fields
    }

    /// The first fire strictly after `date`, or nil if the schedule never fires again.
    public func nextFire(after date: Date) -> Date? {
        guard fields.canFire else { return nil }
        let after = Int64(floor(date.timeIntervalSince1970))   // fires are whole seconds
        var start = WallTime(seconds: clock.wallSeconds(at: after) + 60)
        // Wall times up to the one shown at `after` have fired already. Later ones can
        // have too only in the repeated hour of a fall-back, so this loop is short.
        for _ in 0..<1440 {
            guard let wall = search(from: start, forward: true) else { return nil }
            let instant = clock.firstInstant(reaching: wall.seconds)
            if instant > after { return Date(timeIntervalSince1970: Double(instant)) }
            start = WallTime(seconds: wall.seconds + 60)
        }
        return nil
    }

    /// The last fire strictly before `date`, or nil if there is none.
    public func previousFire(before date: Date) -> Date? {
        guard fields.canFire else { return nil }
        let before = Int64(ceil(date.timeIntervalSince1970)) - 1
        var start = WallTime(seconds: clock.latestWall(through: before))
        // Candidates above the clock's real latest wall time (at most an overlap's worth)
        // fire after `before` and are passed over.
        for _ in 0..<1440 {
            guard let wall = search(from: start, forward: false) else { return nil }
            let instant = clock.firstInstant(reaching: wall.seconds)
            if instant <= before { return Date(timeIntervalSince1970: Double(instant)) }
            start = WallTime(seconds: wall.seconds - 60)
        }
        return nil
    }

    /// The fires in `range`, in order, computed as they are read (the sequence may be long:
    /// take a `prefix` to bound the work).
    public func fires(in range: Range<Date>) -> CronFires {
        CronFires(schedule: self, from: range.lowerBound, to: range.upperBound, includingEnd: false)
    }

    /// The fires in `range`, both ends included.
    public func fires(in range: ClosedRange<Date>) -> CronFires {
        CronFires(schedule: self, from: range.lowerBound, to: range.upperBound, includingEnd: true)
    }

    /// The nearest matching wall time at or after (`forward`) or at or before `start`;
    /// nil if none within 400 years (the Gregorian calendar's cycle, weekdays included).
    private func search(from start: WallTime, forward: Bool) -> WallTime? {
        var wall = start
        while abs(wall.year - start.year) <= 400 {
            guard let month = fields.months.nearest(wall.month, forward: forward) else {
                wall.enterYear(forward: forward)
                continue
            }
            if month != wall.month { wall.enterMonth(month, forward: forward) }
            guard fields.dayMatches(day: wall.day, weekday: wall.weekday),
                  let hour = fields.hours.nearest(wall.hour, forward: forward) else {
                wall.stepDay(forward: forward)
                continue
            }
            if hour != wall.hour { (wall.hour, wall.minute) = (hour, forward ? 0 : 59) }
            guard let minute = fields.minutes.nearest(wall.minute, forward: forward) else {
                wall.stepHour(forward: forward)
                continue
            }
            wall.minute = minute
            return wall
        }
        return nil
    }
}

/// The fires of a `CronSchedule` between two dates, in order; each step is one
/// `nextFire(after:)`.
public struct CronFires: Sequence, Sendable {
    let schedule: CronSchedule
    let from: Date
    let to: Date
    let includingEnd: Bool

    /// Walks the fires from the range's start; after the last one it answers nil.
    public struct Iterator: IteratorProtocol, Sendable {
        let fires: CronFires
        var cursor: Date?

        public mutating func next() -> Date? {
            guard let cursor, let fire = fires.schedule.nextFire(after: cursor),
                  fires.includingEnd ? fire <= fires.to : fire < fires.to else {
                cursor = nil
                return nil
            }
            self.cursor = fire
            return fire
        }
    }

    public func makeIterator() -> Iterator {
        // Fires are whole seconds: the first one at or after `from` comes after ceil(from) - 1.
        Iterator(fires: self, cursor: Date(timeIntervalSince1970: ceil(from.timeIntervalSince1970) - 1))
    }
}
