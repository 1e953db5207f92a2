import Foundation
import Testing
@testable import Scheduler

@Suite("Next and previous fires (UTC)")
struct NextFireTests {
    @Test("steps within the hour, from a time between fires")
    func quarterHours() throws {
        #expect(nextFires(try CronSchedule("*/15 * * * *"), after: "2026-01-01T00:07:30Z", count: 4)
            == ["2026-01-01T00:15:00Z", "2026-01-01T00:30:00Z", "2026-01-01T00:45:00Z", "2026-01-01T01:00:00Z"])
    }

    @Test("the next fire is strictly after the date, even a fraction of a second")
    func strictlyAfter() throws {
        let hourly = try CronSchedule("@hourly")
        #expect(local(hourly.nextFire(after: instant("2026-01-01T10:00:00Z"))) == "2026-01-01T11:00:00Z")
        #expect(local(hourly.nextFire(after: instant("2026-01-01T10:59:59Z"))) == "2026-01-01T11:00:00Z")
        let justBefore = instant("2026-01-01T11:00:00Z").addingTimeInterval(-0.25)
        #expect(local(hourly.nextFire(after: justBefore)) == "2026-01-01T11:00:00Z")
    }

    @Test("weekdays skip the weekend")
    func weekdays() throws {
        #expect(nextFires(try CronSchedule("0 9 * * MON-FRI"), after: "2026-01-02T09:00:00Z", count: 2)
            == ["2026-01-05T09:00:00Z", "2026-01-06T09:00:00Z"])
    }

    @Test("the 31st skips months without one")
    func monthEnds() throws {
        #expect(nextFires(try CronSchedule("0 0 31 * *"), after: "2026-01-31T00:00:00Z", count: 4)
            == ["2026-03-31T00:00:00Z", "2026-05-31T00:00:00Z", "2026-07-31T00:00:00Z", "2026-08-31T00:00:00Z"])
        #expect(nextFires(try CronSchedule("59 23 30 * *"), after: "2026-01-31T00:00:00Z", count: 2)
            == ["2026-03-30T23:59:00Z", "2026-04-30T23:59:00Z"])
    }

    @Test("February 29 comes every four years, and not in 2100")
    func leapDays() throws {
        let leap = try CronSchedule("0 12 29 2 *")
        #expect(nextFires(leap, after: "2026-01-01T00:00:00Z", count: 2) == ["2028-02-29T12:00:00Z", "2032-02-29T12:00:00Z"])
        #expect(nextFires(leap, after: "2096-03-01T00:00:00Z", count: 1) == ["2104-02-29T12:00:00Z"])
        #expect(local(leap.previousFire(before: instant("2104-02-29T12:00:00Z"))) == "2096-02-29T12:00:00Z")
        #expect(nextFires(try CronSchedule("0 0 29 2 */1"), after: "2026-01-01T00:00:00Z", count: 1)
            == ["2028-02-29T00:00:00Z"])
    }

    @Test("years roll over; macros fire where their fields say")
    func macros() throws {
        #expect(nextFires(try CronSchedule("0 0 1 1 *"), after: "2026-12-31T23:59:59Z", count: 1) == ["2027-01-01T00:00:00Z"])
        #expect(nextFires(try CronSchedule("@yearly"), after: "2026-06-15T00:00:00Z", count: 1) == ["2027-01-01T00:00:00Z"])
        #expect(nextFires(try CronSchedule("@monthly"), after: "2026-01-01T00:00:00Z", count: 2)
            == ["2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z"])
        // 2026-01-01 is a Thursday.
        #expect(nextFires(try CronSchedule("@weekly"), after: "2026-01-01T00:00:00Z", count: 2)
            == ["2026-01-04T00:00:00Z", "2026-01-11T00:00:00Z"])
        #expect(nextFires(try CronSchedule("@daily"), after: "2026-02-28T00:00:00Z", count: 2)
            == ["2026-03-01T00:00:00Z", "2026-03-02T00:00:00Z"])
        #expect(nextFires(try CronSchedule("@midnight"), after: "2028-02-28T00:00:00Z", count: 2)
            == ["2028-02-29T00:00:00Z", "2028-03-01T00:00:00Z"])
    }

    @Test("names, Sunday as 7, and steps over ranges")
    func namesAndSteps() throws {
        #expect(nextFires(try CronSchedule("0 12 1 jan,Jul *"), after: "2026-01-01T12:00:00Z", count: 2)
            == ["2026-07-01T12:00:00Z", "2027-01-01T12:00:00Z"])
        #expect(nextFires(try CronSchedule("0 0 * * 5-7"), after: "2026-01-01T00:00:00Z", count: 4)
            == ["2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z", "2026-01-04T00:00:00Z", "2026-01-09T00:00:00Z"])
        #expect(nextFires(try CronSchedule("10-50/20 * * * *"), after: "2026-01-01T00:00:00Z", count: 4)
            == ["2026-01-01T00:10:00Z", "2026-01-01T00:30:00Z", "2026-01-01T00:50:00Z", "2026-01-01T01:10:00Z"])
        #expect(nextFires(try CronSchedule("0 0 1 */3 *"), after: "2026-01-01T00:00:00Z", count: 3)
            == ["2026-04-01T00:00:00Z", "2026-07-01T00:00:00Z", "2026-10-01T00:00:00Z"])
    }

    @Test("both day fields restricted: a day matches if either does (Vixie cron)")
    func dayOrRule() throws {
        // April 2026: the 13th is a Monday; Fridays are the 3rd, 10th, 17th and 24th.
        #expect(nextFires(try CronSchedule("0 0 13 * FRI"), after: "2026-04-01T00:00:00Z", count: 7) == [
            "2026-04-03T00:00:00Z", "2026-04-10T00:00:00Z", "2026-04-13T00:00:00Z", "2026-04-17T00:00:00Z",
            "2026-04-24T00:00:00Z", "2026-05-01T00:00:00Z", "2026-05-08T00:00:00Z",
        ])
        // February has no 30th, but it has Mondays.
        #expect(nextFires(try CronSchedule("0 0 30 2 MON"), after: "2026-03-01T00:00:00Z", count: 5) == [
            "2027-02-01T00:00:00Z", "2027-02-08T00:00:00Z", "2027-02-15T00:00:00Z", "2027-02-22T00:00:00Z",
            "2028-02-07T00:00:00Z",
        ])
        #expect(nextFires(try CronSchedule("0 0 29 2 MON"), after: "2028-02-27T00:00:00Z", count: 3)
            == ["2028-02-28T00:00:00Z", "2028-02-29T00:00:00Z", "2029-02-05T00:00:00Z"])
    }

    @Test("a day field starting with * makes both day fields apply together")
    func dayAndRule() throws {
        // Days 1, 11, 21, 31 that are Fridays.
        #expect(nextFires(try CronSchedule("0 0 */10 * FRI"), after: "2026-04-01T00:00:00Z", count: 4) == [
            "2026-05-01T00:00:00Z", "2026-07-31T00:00:00Z", "2026-08-21T00:00:00Z", "2026-09-11T00:00:00Z",
        ])
        // Every day of the month, on Fridays only.
        #expect(nextFires(try CronSchedule("0 0 * * FRI"), after: "2026-04-01T00:00:00Z", count: 2)
            == ["2026-04-03T00:00:00Z", "2026-04-10T00:00:00Z"])
    }

    @Test("a schedule that can never fire answers nil at once", arguments: [
        "0 0 30 2 *", "0 0 31 2,4,6,9,11 *", "0 0 31 2 */2", "0 0 30,31 FEB *",
    ])
    func never(expression: String) throws {
        let schedule = try CronSchedule(expression)
        let started = Date()
        #expect(schedule.nextFire(after: instant("2026-01-01T00:00:00Z")) == nil)
        #expect(schedule.previousFire(before: instant("2026-01-01T00:00:00Z")) == nil)
        #expect(schedule.fires(in: instant("2000-01-01T00:00:00Z")..<instant("2400-01-01T00:00:00Z")).first(where: { _ in true }) == nil)
        #expect(Date().timeIntervalSince(started) < 1)
    }

    @Test("previous fires mirror next fires")
    func previous() throws {
        let schedule = try CronSchedule("0 0 31 * *")
        #expect(local(schedule.previousFire(before: instant("2026-03-31T00:00:00Z"))) == "2026-01-31T00:00:00Z")
        #expect(local(schedule.previousFire(before: instant("2026-03-31T00:00:01Z"))) == "2026-03-31T00:00:00Z")
        let quarter = try CronSchedule("*/15 9-17 * * MON-FRI")
        // Monday 2026-01-05 08:00 → the Friday before, 17:45.
        #expect(local(quarter.previousFire(before: instant("2026-01-05T08:00:00Z"))) == "2026-01-02T17:45:00Z")
        #expect(local(quarter.previousFire(before: instant("2026-01-05T09:00:00Z").addingTimeInterval(0.5))) == "2026-01-05T09:00:00Z")
    }

    @Test("fires in a range: half-open or closed")
    func ranges() throws {
        let hourly = try CronSchedule("0 * * * *")
        let start = instant("2026-01-01T10:00:00Z"), end = instant("2026-01-01T13:00:00Z")
        #expect(hourly.fires(in: start..<end).map { local($0) }
            == ["2026-01-01T10:00:00Z", "2026-01-01T11:00:00Z", "2026-01-01T12:00:00Z"])
        #expect(hourly.fires(in: start...end).map { local($0) }
            == ["2026-01-01T10:00:00Z", "2026-01-01T11:00:00Z", "2026-01-01T12:00:00Z", "2026-01-01T13:00:00Z"])
        #expect(Array(hourly.fires(in: start.addingTimeInterval(0.5)..<end)).count == 2)
        #expect(Array(hourly.fires(in: start..<start)).isEmpty)
    }

    @Test("a fire years away costs a bounded number of steps, not a minute-by-minute walk")
    func farAway() throws {
        let schedule = try CronSchedule("59 23 29 2 MON")   // OR rule: any Monday in February, or the 29th
        let sparse = try CronSchedule("59 23 29 2 */1")      // AND rule: a leap day, any weekday
        let started = Date()
        var cursor = instant("2001-01-01T00:00:00Z")
        for _ in 0..<100 { cursor = sparse.nextFire(after: cursor)! }
        // 97 leap days from 2004 to 2400 (not 2100, 2200, 2300), then 2404, 2408, 2412.
        #expect(local(cursor) == "2412-02-29T23:59:00Z")
        #expect(local(schedule.nextFire(after: instant("2026-03-01T00:00:00Z"))) == "2027-02-01T23:59:00Z")
        #expect(Date().timeIntervalSince(started) < 1)
    }
}
