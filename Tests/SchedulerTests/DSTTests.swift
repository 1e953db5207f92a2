import Foundation
import Testing
@testable import Scheduler

/// Daylight saving time: a wall time that a spring-forward skips fires once, at the end
/// of the gap; a wall time that a fall-back repeats fires once, the first time.
///
/// 2026 in America/New_York: 02:00 EST → 03:00 EDT on March 8, 02:00 EDT → 01:00 EST on
/// November 1. In Europe/Berlin: 02:00 CET → 03:00 CEST on March 29, 03:00 CEST →
/// 02:00 CET on October 25.
@Suite("Fires across DST changes")
struct DSTTests {
    let newYork = "America/New_York", berlin = "Europe/Berlin"

    @Test("New York spring-forward: 02:30 does not exist and fires at 03:00 EDT, once")
    func newYorkGap() throws {
        let schedule = try CronSchedule("30 2 * * *", timeZone: newYork)
        #expect(nextFires(schedule, after: "2026-03-06T12:00:00-05:00", count: 3)
            == ["2026-03-07T02:30:00-05:00", "2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00"])
        #expect(nextFires(try CronSchedule("0 2 * * *", timeZone: newYork), after: "2026-03-07T12:00:00-05:00", count: 2)
            == ["2026-03-08T03:00:00-04:00", "2026-03-09T02:00:00-04:00"])
    }

    @Test("several times in one gap, and the gap's end itself, fire together once")
    func gapCoalesces() throws {
        #expect(nextFires(try CronSchedule("*/30 * * * *", timeZone: newYork), after: "2026-03-08T01:00:00-05:00", count: 3)
            == ["2026-03-08T01:30:00-05:00", "2026-03-08T03:00:00-04:00", "2026-03-08T03:30:00-04:00"])
        #expect(nextFires(try CronSchedule("0 2,3 * * *", timeZone: newYork), after: "2026-03-08T00:00:00-05:00", count: 2)
            == ["2026-03-08T03:00:00-04:00", "2026-03-09T02:00:00-04:00"])
        #expect(nextFires(try CronSchedule("30 2,3 * * *", timeZone: newYork), after: "2026-03-08T00:00:00-05:00", count: 2)
            == ["2026-03-08T03:00:00-04:00", "2026-03-08T03:30:00-04:00"])
    }

    @Test("the gap's fire is found from just before it, and not again from it")
    func aroundTheGap() throws {
        let schedule = try CronSchedule("30 2 * * *", timeZone: newYork)
        #expect(local(schedule.nextFire(after: instant("2026-03-08T01:59:59-05:00")), newYork) == "2026-03-08T03:00:00-04:00")
        #expect(local(schedule.nextFire(after: instant("2026-03-08T03:00:00-04:00")), newYork) == "2026-03-09T02:30:00-04:00")
        #expect(local(schedule.previousFire(before: instant("2026-03-08T03:00:01-04:00")), newYork) == "2026-03-08T03:00:00-04:00")
        #expect(local(schedule.previousFire(before: instant("2026-03-08T03:00:00-04:00")), newYork) == "2026-03-07T02:30:00-05:00")
    }

    @Test("New York fall-back: 01:30 fires at 01:30 EDT and not again at 01:30 EST")
    func newYorkOverlap() throws {
        #expect(nextFires(try CronSchedule("30 1 * * *", timeZone: newYork), after: "2026-10-31T12:00:00-04:00", count: 2)
            == ["2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"])
        #expect(nextFires(try CronSchedule("0 * * * *", timeZone: newYork), after: "2026-10-31T23:30:00-04:00", count: 4) == [
            "2026-11-01T00:00:00-04:00", "2026-11-01T01:00:00-04:00", "2026-11-01T02:00:00-05:00", "2026-11-01T03:00:00-05:00",
        ])
    }

    @Test("from inside the repeated hour, the times it repeats are behind us")
    func insideTheOverlap() throws {
        let secondPass = instant("2026-11-01T01:10:00-05:00")
        #expect(local(try CronSchedule("30 1 * * *", timeZone: newYork).nextFire(after: secondPass), newYork)
            == "2026-11-02T01:30:00-05:00")
        #expect(local(try CronSchedule("*/20 * * * *", timeZone: newYork).nextFire(after: secondPass), newYork)
            == "2026-11-01T02:00:00-05:00")
        #expect(local(try CronSchedule("45 1 * * *", timeZone: newYork).previousFire(before: secondPass), newYork)
            == "2026-11-01T01:45:00-04:00")
        #expect(local(try CronSchedule("5 1 * * *", timeZone: newYork).previousFire(before: secondPass), newYork)
            == "2026-11-01T01:05:00-04:00")
    }

    @Test("a fall-back day's half-hourly fires: the repeated hour has none (4 real hours, 6 fires)")
    func overlapDay() throws {
        let schedule = try CronSchedule("*/30 * * * *", timeZone: newYork)
        let fires = schedule.fires(in: instant("2026-11-01T00:00:00-04:00")..<instant("2026-11-01T03:00:00-05:00"))
        #expect(fires.map { local($0, newYork) } == [
            "2026-11-01T00:00:00-04:00", "2026-11-01T00:30:00-04:00", "2026-11-01T01:00:00-04:00",
            "2026-11-01T01:30:00-04:00", "2026-11-01T02:00:00-05:00", "2026-11-01T02:30:00-05:00",
        ])
    }

    @Test("Berlin spring-forward at 02:00 CET and fall-back at 03:00 CEST")
    func berlinChanges() throws {
        let schedule = try CronSchedule("30 2 * * *", timeZone: berlin)
        #expect(nextFires(schedule, after: "2026-03-28T12:00:00+01:00", count: 2)
            == ["2026-03-29T03:00:00+02:00", "2026-03-30T02:30:00+02:00"])
        #expect(nextFires(schedule, after: "2026-10-24T12:00:00+02:00", count: 2)
            == ["2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00"])
        #expect(nextFires(try CronSchedule("0 2 * * SUN", timeZone: berlin), after: "2026-10-24T00:00:00+02:00", count: 2)
            == ["2026-10-25T02:00:00+02:00", "2026-11-01T02:00:00+01:00"])
    }

    @Test("@daily in a zone fires at local midnight, whatever the offset")
    func dailyInAZone() throws {
        let daily = try CronSchedule("@daily", timeZone: berlin)
        let fires = nextFires(daily, after: "2026-03-28T12:00:00+01:00", count: 3)
        #expect(fires == ["2026-03-29T00:00:00+01:00", "2026-03-30T00:00:00+02:00", "2026-03-31T00:00:00+02:00"])
        #expect(fires.map { local(instant($0)) } == ["2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z", "2026-03-30T22:00:00Z"])
    }

    @Test("a zone without DST and one with a half-hour offset")
    func otherZones() throws {
        #expect(nextFires(try CronSchedule("0 9 * * *", timeZone: "Asia/Kolkata"), after: "2026-03-08T00:00:00Z", count: 1)
            .map { local(instant($0)) } == ["2026-03-08T03:30:00Z"])
        // Lord Howe Island moves its clocks by 30 minutes: 02:00 → 02:30 on 2026-10-04.
        #expect(nextFires(try CronSchedule("15 2 * * *", timeZone: "Australia/Lord_Howe"), after: "2026-10-03T12:00:00+10:30", count: 2)
            == ["2026-10-04T02:30:00+11:00", "2026-10-05T02:15:00+11:00"])
    }
}
