import Foundation
import Testing
@testable import Scheduler

@Suite("Cron syntax")
struct CronParseTests {
    func fields(_ expression: String) throws -> CronFields {
        try CronSchedule(expression).fields
    }

    @Test("values, ranges, lists and steps")
    func items() throws {
        let f = try fields("5,10-12,*/20 0-23/6 1-31/10 */4 1-5")
        #expect(f.minutes.members == [0, 5, 10, 11, 12, 20, 40])
        #expect(f.hours.members == [0, 6, 12, 18])
        #expect(f.daysOfMonth.members == [1, 11, 21, 31])
        #expect(f.months.members == [1, 5, 9])
        #expect(f.daysOfWeek.members == [1, 2, 3, 4, 5])
        #expect(!f.dayOfMonthStar && !f.dayOfWeekStar)
    }

    @Test("* covers each field's range; day-of-week * is 0-6")
    func stars() throws {
        let f = try fields("* * * * *")
        #expect(f.minutes.members == Array(0...59))
        #expect(f.hours.members == Array(0...23))
        #expect(f.daysOfMonth.members == Array(1...31))
        #expect(f.months.members == Array(1...12))
        #expect(f.daysOfWeek.members == Array(0...6))
        #expect(f.dayOfMonthStar && f.dayOfWeekStar)
    }

    @Test("month and weekday names in any case, in lists and ranges")
    func names() throws {
        let f = try fields("0 0 * jan,Mar-MAY,dec sun,Wed-fri")
        #expect(f.months.members == [1, 3, 4, 5, 12])
        #expect(f.daysOfWeek.members == [0, 3, 4, 5])
        #expect(try fields("0 0 * FEB-APR/2 MON-SAT/2").months.members == [2, 4])
        #expect(try fields("0 0 * FEB-APR/2 MON-SAT/2").daysOfWeek.members == [1, 3, 5])
    }

    @Test("day-of-week 7 is Sunday, alone and ending a range")
    func sundaySeven() throws {
        #expect(try fields("0 0 * * 7").daysOfWeek.members == [0])
        #expect(try fields("0 0 * * 5-7").daysOfWeek.members == [0, 5, 6])
        #expect(try fields("0 0 * * 0,7").daysOfWeek.members == [0])
    }

    @Test("a field starting with * counts as unrestricted for the day rule, as in Vixie cron")
    func starFlags() throws {
        let stepped = try fields("0 0 */2 * MON")
        #expect(stepped.dayOfMonthStar && !stepped.dayOfWeekStar)
        #expect(try fields("0 0 1 * */2").dayOfWeekStar)
        let restricted = try fields("0 0 1-31 * 0-6")
        #expect(!restricted.dayOfMonthStar && !restricted.dayOfWeekStar)
    }

    @Test("macros stand for their five fields", arguments: [
        ("@yearly", "0 0 1 1 *"), ("@annually", "0 0 1 1 *"), ("@monthly", "0 0 1 * *"),
        ("@weekly", "0 0 * * 0"), ("@daily", "0 0 * * *"), ("@midnight", "0 0 * * *"),
        ("@hourly", "0 * * * *"), ("@DAILY", "0 0 * * *"),
    ])
    func macros(macro: String, fields expansion: String) throws {
        #expect(try fields(macro) == fields(expansion))
        #expect(try CronSchedule(macro).expression == macro)
    }

    @Test("fields may be separated by several spaces and tabs; the expression is kept trimmed")
    func whitespace() throws {
        let schedule = try CronSchedule("  0\t12  *   * \t MON ")
        #expect(schedule.fields == (try fields("0 12 * * MON")))
        #expect(schedule.expression == "0\t12  *   * \t MON")
    }

    @Test("time zones come from the tz database, UTC by default")
    func zones() throws {
        let utc = try CronSchedule("* * * * *")
        #expect(utc.timeZoneName == "UTC" && utc.timeZone.secondsFromGMT(for: Date()) == 0)
        #expect(utc.description == "* * * * * (UTC)")
        #expect(try CronSchedule("* * * * *", timeZone: "Europe/Berlin").timeZone.identifier == "Europe/Berlin")
        #expect(try CronSchedule("0 9 * * *", timeZone: "Asia/Kolkata").description == "0 9 * * * (Asia/Kolkata)")
    }
}
