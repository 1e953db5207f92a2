import Foundation
import Testing
@testable import Scheduler

/// About 200 seeded random schedules, each in one of four zones, against a matcher that
/// walks every minute of two windows holding all four zones' 2026 DST changes. The
/// matcher shares no code with the scheduler: the allowed values come from the generator,
/// wall clocks from Foundation's Calendar, and the DST rule is applied minute by minute
/// (a wall time fires the first time the clock shows it; wall times the clock jumps over
/// fire at the first minute after the jump).
@Suite("Random schedules against a minute-by-minute matcher")
struct CrossCheckTests {
    static let zones = ["UTC", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe"]
    static let windows = [
        ("2026-03-01T00:00:00Z", "2026-04-10T00:00:00Z"),   // NY Mar 8, Berlin Mar 29, Lord Howe Apr 5
        ("2026-09-25T00:00:00Z", "2026-11-10T00:00:00Z"),   // Lord Howe Oct 4, Berlin Oct 25, NY Nov 1
    ]

    @Test("fires, next and previous agree with the matcher for 200 schedules")
    func randomSchedules() throws {
        var rng = SeededGenerator(state: 20_260_308)
        let tables = Self.zones.map { zone in Self.windows.map { WallClockTable(zone: zone, window: $0) } }
        var checkedFires = 0
        for index in 0..<200 {
            let expected = RandomSchedule(&rng)
            let zone = index % Self.zones.count
            let schedule = try CronSchedule(expected.text, timeZone: Self.zones[zone])
            for table in tables[zone] {
                let want = table.fires(of: expected)
                let got = schedule.fires(in: table.start..<table.end).map { Int64($0.timeIntervalSince1970) }
                checkedFires += want.count
                guard got == want else {
                    let at = zip(got, want).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset
                        ?? min(got.count, want.count)
                    Issue.record("""
                        \(schedule) in \(table.start)..<\(table.end): \(got.count) fires, matcher \(want.count); \
                        first difference at #\(at): \(got.dropFirst(at).first.map(table.show) ?? "none") \
                        vs \(want.dropFirst(at).first.map(table.show) ?? "none")
                        """)
                    break
                }
                for (i, fire) in want.enumerated().prefix(300) where i > 0 {
                    let previous = schedule.previousFire(before: Date(timeIntervalSince1970: Double(fire)))
                    #expect(previous.map { Int64($0.timeIntervalSince1970) } == want[i - 1], "\(schedule) before \(table.show(fire))")
                }
                for _ in 0..<10 {
                    let probe = Int64.random(in: table.startSecond..<table.endSecond, using: &rng)
                    let date = Date(timeIntervalSince1970: Double(probe) + 0.5)
                    if let next = want.first(where: { $0 > probe }) {
                        #expect(schedule.nextFire(after: date).map { Int64($0.timeIntervalSince1970) } == next,
                                "\(schedule) after \(table.show(probe))")
                    }
                    if let previous = want.last(where: { $0 <= probe }) {
                        #expect(schedule.previousFire(before: date).map { Int64($0.timeIntervalSince1970) } == previous,
                                "\(schedule) before \(table.show(probe))")
                    }
                }
            }
        }
        #expect(checkedFires > 100_000)   // 177,748 with this seed
    }
}

/// A seeded generator (a 64-bit linear congruential step, Knuth's MMIX constants, with
/// the high half folded into the low), so a failure names a schedule that can be
/// reproduced. Test data only.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state ^ (state >> 32)
    }
}

/// A random cron expression and, worked out by the generator itself, what it allows.
struct RandomSchedule {
    var text = ""
    /// Allowed minutes, hours, days of month, months and weekdays (0 = Sunday), one bit each.
    var minutes: UInt64 = 0, hours: UInt64 = 0, days: UInt64 = 0, months: UInt64 = 0, weekdays: UInt64 = 0
    var dayOfMonthStar = false
    var dayOfWeekStar = false

    init(_ rng: inout SeededGenerator) {
        var fields: [String] = [], allowed: [UInt64] = []
        for field in 0..<5 {
            let (text, values) = Self.field(field, &rng)
            fields.append(text)
            allowed.append(values)
        }
        (minutes, hours, days, months, weekdays) = (allowed[0], allowed[1], allowed[2], allowed[3], allowed[4])
        dayOfMonthStar = fields[2].hasPrefix("*")
        dayOfWeekStar = fields[4].hasPrefix("*")
        text = fields.joined(separator: " ")
    }

    /// Whether the schedule's fields allow minute `m`'s wall-clock time.
    func matches(_ m: WallClockTable.Minute) -> Bool {
        guard minutes >> UInt64(m.minute) & 1 == 1, hours >> UInt64(m.hour) & 1 == 1,
              months >> UInt64(m.month) & 1 == 1 else { return false }
        let byDay = days >> UInt64(m.day) & 1 == 1, byWeekday = weekdays >> UInt64(m.weekday) & 1 == 1
        return dayOfMonthStar || dayOfWeekStar ? byDay && byWeekday : byDay || byWeekday
    }

    /// One field: one to three items of every kind. Minutes are kept sparse (`*` rare,
    /// short ranges, steps of 10 or more) so the windows hold a moderate number of fires.
    static func field(_ field: Int, _ rng: inout SeededGenerator) -> (String, UInt64) {
        let (low, high) = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 7)][field]
        let starHigh = field == 4 ? 6 : high, minStep = field == 0 ? 10 : 1
        let names = field == 3 ? ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]
            : field == 4 ? ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"] : []
        func write(_ value: Int) -> String {
            let index = value - (field == 3 ? 1 : 0)
            guard index < names.count, Bool.random(using: &rng) else { return String(value) }
            return [names[index], names[index].lowercased(), names[index].capitalized][Int.random(in: 0..<3, using: &rng)]
        }
        var items: [String] = [], values: UInt64 = 0
        for _ in 0..<Int.random(in: 1...3, using: &rng) {
            var (start, end, step) = (low, starHigh, 1)
            let a = Int.random(in: low...high, using: &rng)
            let b = field == 0 ? min(high, a + Int.random(in: 0...4, using: &rng)) : Int.random(in: low...high, using: &rng)
            switch Int.random(in: 0..<100, using: &rng) + (field == 0 ? 8 : 0) {
            case ..<10:
                items.append("*")
            case ..<25:
                step = Int.random(in: minStep...(starHigh - low), using: &rng)
                items.append("*/\(step)")
            case ..<65:
                (start, end) = (a, a)
                items.append(write(a))
            case ..<85:
                (start, end) = (min(a, b), max(a, b))
                items.append("\(write(start))-\(write(end))")
            default:
                (start, end) = (min(a, b), max(a, b))
                step = Int.random(in: 1...(starHigh - low), using: &rng)
                items.append("\(write(start))-\(write(end))/\(step)")
            }
            for v in stride(from: start, through: end, by: step) { values |= 1 << UInt64(field == 4 && v == 7 ? 0 : v) }
        }
        return (items.joined(separator: ","), values)
    }
}

/// Every minute of a window in one zone: its instant, and the wall clock then (the offset
/// from Foundation's TimeZone, the date from its Calendar).
struct WallClockTable {
    struct Minute {
        var instant: Int64
        var wall: Int64
        var minute, hour, day, month, weekday: Int8
    }

    let zone: TimeZone
    let start: Date, end: Date
    let startSecond: Int64, endSecond: Int64
    let minutes: [Minute]
    /// The wall time a minute before the window.
    let wallBefore: Int64
    private let calendar: Calendar

    init(zone name: String, window: (String, String)) {
        zone = TimeZone(identifier: name)!
        (start, end) = (instant(window.0), instant(window.1))
        (startSecond, endSecond) = (Int64(start.timeIntervalSince1970), Int64(end.timeIntervalSince1970))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "GMT")!
        self.calendar = calendar
        let zone = zone
        func wall(_ t: Int64) -> Int64 { t + Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(t)))) }
        wallBefore = wall(startSecond - 60)
        var dates: [Int64: DateComponents] = [:]   // the Calendar's date of each wall-clock day
        minutes = stride(from: startSecond, to: endSecond, by: 60).map { t in
            Self.minute(instant: t, wall: wall(t), calendar, &dates)
        }
    }

    /// The minute at `instant` whose wall clock shows `wall` seconds: the date from the
    /// Calendar (once per day), the time of day from the seconds into the day.
    static func minute(instant: Int64, wall: Int64, _ calendar: Calendar, _ dates: inout [Int64: DateComponents]) -> Minute {
        let secondOfDay = (wall % 86_400 + 86_400) % 86_400, midnight = wall - secondOfDay
        if dates[midnight] == nil {
            dates[midnight] = calendar.dateComponents([.day, .month, .weekday], from: Date(timeIntervalSince1970: Double(midnight)))
        }
        let c = dates[midnight]!
        return Minute(instant: instant, wall: wall, minute: Int8(secondOfDay / 60 % 60), hour: Int8(secondOfDay / 3600),
                      day: Int8(c.day!), month: Int8(c.month!), weekday: Int8(c.weekday! - 1))
    }

    /// The instants at which `schedule` fires in this window, minute by minute.
    func fires(of schedule: RandomSchedule) -> [Int64] {
        var fires: [Int64] = []
        var dates: [Int64: DateComponents] = [:]
        var highest = wallBefore
        for m in minutes {
            guard m.wall > highest else { continue }   // shown before: fired the first time, if at all
            var fire = schedule.matches(m)
            if !fire, m.wall > highest + 60 {   // the clock jumped over these wall times
                fire = stride(from: highest + 60, to: m.wall, by: 60).contains {
                    schedule.matches(Self.minute(instant: m.instant, wall: $0, calendar, &dates))
                }
            }
            if fire { fires.append(m.instant) }
            highest = m.wall
        }
        return fires
    }

    func show(_ instant: Int64) -> String { local(Date(timeIntervalSince1970: Double(instant)), zone.identifier) }
}
