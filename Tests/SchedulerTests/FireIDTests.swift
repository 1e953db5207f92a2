import Foundation
import Testing
@testable import Scheduler

@Suite("Run ids of fires")
struct FireIDTests {
    @Test("JOB@ the scheduled time in RFC 3339 UTC, whole seconds")
    func format() {
        #expect(FireID.runID(job: "nightly-sync", scheduled: instant("2026-03-08T03:00:00-04:00"))
            == "nightly-sync@2026-03-08T07:00:00Z")
        #expect(FireID.runID(job: "a", scheduled: instant("2026-03-08T07:00:00Z").addingTimeInterval(0.999))
            == "a@2026-03-08T07:00:00Z")
        #expect(FireID.runID(job: "a", scheduled: instant("1969-12-31T23:59:59Z")) == "a@1969-12-31T23:59:59Z")
        // Proleptic Gregorian, as RFC 3339 says (Foundation's formatter switches to Julian before 1582).
        #expect(FireID.runID(job: "a", scheduled: Date(timeIntervalSince1970: -62_135_596_800)) == "a@0001-01-01T00:00:00Z")
        #expect(FireID.runID(job: "a", scheduled: instant("9999-12-31T23:59:59Z")) == "a@9999-12-31T23:59:59Z")
        #expect(FireID(job: "b", scheduled: instant("2028-02-29T12:34:56Z")).description == "b@2028-02-29T12:34:56Z")
    }

    @Test("a fire by hand: JOB@manual-<RFC 3339 UTC to the millisecond>-<suffix>, which parse refuses")
    func manual() {
        let now = instant("2026-03-08T09:12:44Z").addingTimeInterval(0.5)
        #expect(FireID.timestamp(now) == "2026-03-08T09:12:44Z")
        #expect(FireID.manualRunID(job: "nightly-sync", at: now, suffix: "3f9a1c") == "nightly-sync@manual-2026-03-08T09:12:44.500Z-3f9a1c")
        #expect(FireID.millisecondTimestamp(instant("2026-03-08T09:12:44Z")) == "2026-03-08T09:12:44.000Z")
        #expect(FireID.millisecondTimestamp(instant("2026-03-08T09:12:44Z").addingTimeInterval(0.0625)) == "2026-03-08T09:12:44.062Z")
        // Before 1970 the fraction still counts up from the second before.
        #expect(FireID.millisecondTimestamp(instant("1969-12-31T23:59:59Z").addingTimeInterval(0.25)) == "1969-12-31T23:59:59.250Z")
        #expect(throws: SchedulerError.self) { try FireID.parse("nightly-sync@manual-2026-03-08T09:12:44.500Z-3f9a1c") }
        #expect(throws: SchedulerError.self) { try FireID.parse(FireID.manualRunID(job: "nightly-sync", at: now)) }
    }

    @Test("fires by hand at the same instant get different run ids")
    func manualUnique() {
        let now = instant("2026-03-08T09:12:44Z")
        let ids = Set((0..<200).map { _ in FireID.manualRunID(job: "j", at: now) })
        #expect(ids.count == 200)
        for id in ids {
            #expect(id.range(of: "^j@manual-2026-03-08T09:12:44\\.000Z-[0-9a-f]{6}$", options: .regularExpression) != nil, "\(id)")
        }
    }

    @Test("parse is the inverse of runID")
    func roundTrip() throws {
        let fire = try FireID.parse("nightly-sync@2026-03-08T07:00:00Z")
        #expect(fire.job == "nightly-sync")
        #expect(fire.scheduled == instant("2026-03-08T07:00:00Z"))
        #expect(fire == FireID(job: "nightly-sync", scheduled: instant("2026-03-08T07:00:00Z")))
        #expect(try FireID.parse("a@0001-01-01T00:00:00Z").scheduled.timeIntervalSince1970 == -62_135_596_800)
        for text in ["a@0001-01-01T00:00:00Z", "x_1@1969-12-31T23:59:59Z", "b@2000-02-29T00:00:00Z", "c@9999-12-31T23:59:59Z"] {
            #expect(try FireID.parse(text).runID == text)
        }
    }

    @Test("2,000 random seconds from 1900 to 2200 format as Foundation does, and parse back")
    func randomRoundTrip() throws {
        var rng = SeededGenerator(state: 3339)
        let formatter = ISO8601DateFormatter()
        for _ in 0..<2000 {
            let date = Date(timeIntervalSince1970: Double(Int64.random(in: -2_208_988_800...7_258_118_400, using: &rng)))
            let id = FireID.runID(job: "job", scheduled: date)
            #expect(id == "job@" + formatter.string(from: date))
            #expect(try FireID.parse(id).scheduled == date)
        }
    }

    @Test("text that is not a run id", arguments: [
        ("nightly", #"invalid_run_id: run id "nightly": expected JOB@YYYY-MM-DDThh:mm:ssZ"#),
        ("Nightly@2026-03-08T07:00:00Z",
         #"invalid_run_id: run id "Nightly@2026-03-08T07:00:00Z": job name "Nightly" is invalid: use 1-64 characters from a-z, 0-9, _ and -, starting with a letter or digit"#),
        ("@2026-03-08T07:00:00Z",
         #"invalid_run_id: run id "@2026-03-08T07:00:00Z": job name "" is invalid: use 1-64 characters from a-z, 0-9, _ and -, starting with a letter or digit"#),
        ("x@2026-03-08 07:00:00Z", #"invalid_run_id: run id "x@2026-03-08 07:00:00Z": expected JOB@YYYY-MM-DDThh:mm:ssZ"#),
        ("x@2026-03-08T07:00:00+00:00", #"invalid_run_id: run id "x@2026-03-08T07:00:00+00:00": expected JOB@YYYY-MM-DDThh:mm:ssZ"#),
        ("x@2026-03-08t07:00:00z", #"invalid_run_id: run id "x@2026-03-08t07:00:00z": expected JOB@YYYY-MM-DDThh:mm:ssZ"#),
        ("x@2026-03-08T07:00:00.5Z", #"invalid_run_id: run id "x@2026-03-08T07:00:00.5Z": expected JOB@YYYY-MM-DDThh:mm:ssZ"#),
        ("x@2026-03-08T07:00Z", #"invalid_run_id: run id "x@2026-03-08T07:00Z": expected JOB@YYYY-MM-DDThh:mm:ssZ"#),
        ("x@+026-03-08T07:00:00Z", #"invalid_run_id: run id "x@+026-03-08T07:00:00Z": expected JOB@YYYY-MM-DDThh:mm:ssZ"#),
        ("x@2026-02-29T07:00:00Z", #"invalid_run_id: run id "x@2026-02-29T07:00:00Z": 2026-02-29T07:00:00Z is not a UTC time"#),
        ("x@2026-03-08T24:00:00Z", #"invalid_run_id: run id "x@2026-03-08T24:00:00Z": 2026-03-08T24:00:00Z is not a UTC time"#),
        ("x@2026-03-08T07:00:60Z", #"invalid_run_id: run id "x@2026-03-08T07:00:60Z": 2026-03-08T07:00:60Z is not a UTC time"#),
        ("x@0000-01-01T00:00:00Z", #"invalid_run_id: run id "x@0000-01-01T00:00:00Z": 0000-01-01T00:00:00Z is not a UTC time"#),
    ])
    func invalid(text: String, message: String) {
        #expect(failure { _ = try FireID.parse(text) } == message)
    }
}
