import Foundation
import Testing
@testable import Scheduler

@Suite("Planning due and missed fires")
struct FirePlannerTests {
    struct Outcome: Equatable, CustomStringConvertible {
        var due: [String]
        var missed: String?
        var description: String { "due \(due), missed \(missed ?? "nothing")" }
    }

    func plan(_ expression: String, last: String?, now: String, _ catchUp: CatchUpPolicy,
              zone: String = "UTC", grace: TimeInterval = FirePlanner.defaultGrace) throws -> Outcome {
        let schedule = try CronSchedule(expression, timeZone: zone)
        let plan = FirePlanner.plan(schedule, lastFire: last.map(instant), now: instant(now), catchUp: catchUp, grace: grace)
        return Outcome(due: plan.due.map { local($0, zone) },
                       missed: plan.missed.map { "\(local($0.lowerBound, zone))...\(local($0.upperBound, zone))" })
    }

    @Test("a job with no record fires only what is on time")
    func firstSight() throws {
        #expect(try plan("0 * * * *", last: nil, now: "2026-01-01T10:00:05Z", .all(max: 5))
            == Outcome(due: ["2026-01-01T10:00:00Z"], missed: nil))
        #expect(try plan("0 * * * *", last: nil, now: "2026-01-01T10:01:05Z", .latest) == Outcome(due: [], missed: nil))
        #expect(try plan("0 * * * *", last: nil, now: "2026-01-01T09:59:59Z", .latest) == Outcome(due: [], missed: nil))
    }

    @Test("a recorded fire is not planned again")
    func alreadyRecorded() throws {
        #expect(try plan("0 * * * *", last: "2026-01-01T10:00:00Z", now: "2026-01-01T10:00:30Z", .all(max: 5))
            == Outcome(due: [], missed: nil))
        #expect(try plan("0 * * * *", last: "2026-01-01T09:00:00Z", now: "2026-01-01T10:00:05Z", .none)
            == Outcome(due: ["2026-01-01T10:00:00Z"], missed: nil))
    }

    @Test("after an outage, with a fire on time", arguments: [
        (CatchUpPolicy.none, ["2026-01-01T10:00:00Z"], "2026-01-01T06:00:00Z...2026-01-01T09:00:00Z"),
        (.latest, ["2026-01-01T10:00:00Z"], "2026-01-01T06:00:00Z...2026-01-01T09:00:00Z"),
        (.all(max: 2), ["2026-01-01T08:00:00Z", "2026-01-01T09:00:00Z", "2026-01-01T10:00:00Z"],
         "2026-01-01T06:00:00Z...2026-01-01T07:00:00Z"),
        (.all(max: 10), ["2026-01-01T06:00:00Z", "2026-01-01T07:00:00Z", "2026-01-01T08:00:00Z", "2026-01-01T09:00:00Z",
                         "2026-01-01T10:00:00Z"], nil),
    ] as [(CatchUpPolicy, [String], String?)])
    func outageWithOnTimeFire(policy: CatchUpPolicy, due: [String], missed: String?) throws {
        #expect(try plan("0 * * * *", last: "2026-01-01T05:00:00Z", now: "2026-01-01T10:00:05Z", policy)
            == Outcome(due: due, missed: missed))
    }

    @Test("after an outage, between fires", arguments: [
        (CatchUpPolicy.none, [], "2026-01-01T06:00:00Z...2026-01-01T09:00:00Z"),
        (.latest, ["2026-01-01T09:00:00Z"], "2026-01-01T06:00:00Z...2026-01-01T08:00:00Z"),
        (.all(max: 1), ["2026-01-01T09:00:00Z"], "2026-01-01T06:00:00Z...2026-01-01T08:00:00Z"),
        (.all(max: 0), [], "2026-01-01T06:00:00Z...2026-01-01T09:00:00Z"),
    ] as [(CatchUpPolicy, [String], String?)])
    func outageBetweenFires(policy: CatchUpPolicy, due: [String], missed: String?) throws {
        #expect(try plan("0 * * * *", last: "2026-01-01T05:00:00Z", now: "2026-01-01T09:30:00Z", policy)
            == Outcome(due: due, missed: missed))
    }

    @Test("one late fire under latest runs and nothing is missed")
    func singleLate() throws {
        #expect(try plan("0 * * * *", last: "2026-01-01T08:00:00Z", now: "2026-01-01T09:30:00Z", .latest)
            == Outcome(due: ["2026-01-01T09:00:00Z"], missed: nil))
    }

    @Test("a fire exactly grace seconds old is late; grace can be widened")
    func graceBoundary() throws {
        #expect(try plan("0 * * * *", last: "2026-01-01T09:00:00Z", now: "2026-01-01T10:01:00Z", .none)
            == Outcome(due: [], missed: "2026-01-01T10:00:00Z...2026-01-01T10:00:00Z"))
        #expect(try plan("0 * * * *", last: "2026-01-01T09:00:00Z", now: "2026-01-01T10:00:59Z", .none)
            == Outcome(due: ["2026-01-01T10:00:00Z"], missed: nil))
        #expect(try plan("* * * * *", last: "2026-01-01T10:00:00Z", now: "2026-01-01T10:03:30Z", .none, grace: 120)
            == Outcome(due: ["2026-01-01T10:02:00Z", "2026-01-01T10:03:00Z"], missed: "2026-01-01T10:01:00Z...2026-01-01T10:01:00Z"))
    }

    @Test("a last fire after now (a clock set back) makes nothing due")
    func clockSetBack() throws {
        #expect(try plan("* * * * *", last: "2026-01-01T12:00:00Z", now: "2026-01-01T10:00:10Z", .all(max: 5))
            == Outcome(due: [], missed: nil))
    }

    @Test("six years of a minutely job missed cost a few searches; the range lists them")
    func longOutage() throws {
        let schedule = try CronSchedule("* * * * *")
        let started = Date()
        let plan = FirePlanner.plan(schedule, lastFire: instant("2020-01-01T00:00:00Z"), now: instant("2026-01-01T00:00:30Z"),
                                    catchUp: .all(max: 3))
        #expect(Date().timeIntervalSince(started) < 1)
        #expect(plan.due.map { local($0) } == ["2025-12-31T23:57:00Z", "2025-12-31T23:58:00Z", "2025-12-31T23:59:00Z", "2026-01-01T00:00:00Z"])
        let missed = try #require(plan.missed)
        #expect(local(missed.lowerBound) == "2020-01-01T00:01:00Z" && local(missed.upperBound) == "2025-12-31T23:56:00Z")
        #expect(local(plan.settledThrough) == "2026-01-01T00:00:00Z")
        #expect(schedule.fires(in: missed).prefix(2).map { local($0) } == ["2020-01-01T00:01:00Z", "2020-01-01T00:02:00Z"])
    }

    @Test("settledThrough is the latest time the plan runs or misses")
    func settled() throws {
        let schedule = try CronSchedule("0 * * * *")
        let late = FirePlanner.plan(schedule, lastFire: instant("2026-01-01T05:00:00Z"), now: instant("2026-01-01T09:30:00Z"),
                                    catchUp: .none)
        #expect(local(late.settledThrough) == "2026-01-01T09:00:00Z")
        #expect(FirePlanner.plan(schedule, lastFire: nil, now: instant("2026-01-01T09:30:00Z"), catchUp: .none).settledThrough == nil)
    }

    @Test("across a spring-forward gap the gap's fire is on time at 03:00 EDT")
    func dstGap() throws {
        let zone = "America/New_York"
        #expect(try plan("30 2 * * *", last: "2026-03-07T02:30:00-05:00", now: "2026-03-08T03:00:20-04:00", .none, zone: zone)
            == Outcome(due: ["2026-03-08T03:00:00-04:00"], missed: nil))
        #expect(try plan("30 1 * * *", last: "2026-11-01T01:30:00-04:00", now: "2026-11-01T01:30:20-05:00", .all(max: 3), zone: zone)
            == Outcome(due: [], missed: nil))
    }
}
