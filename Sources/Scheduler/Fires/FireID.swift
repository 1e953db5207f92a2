import Foundation
import SystemText

/// One fire of a job, named by its run id `JOB@<scheduled time>`, the time in RFC 3339
/// UTC to the second (`nightly-sync@2026-03-08T07:00:00Z`).
///
/// The run id depends only on the job and the scheduled time, never on who fires it or
/// when it actually starts, so two schedulers, a catch-up or a restart derive the same
/// idempotency keys for the same fire. `runID` and `parse` are inverses for job names
/// that pass `JobDefinition.validateName` and times in years 0001–9999.
///
/// The UTC formatting is written here (a few lines over `WallTime`) rather than taken
/// from ScriptHost's `RFC3339`, which this Lua-free module must not depend on.
public struct FireID: Hashable, Sendable, CustomStringConvertible {
    /// The job's name.
    public let job: String
    /// The scheduled time, in whole seconds.
    public let scheduled: Date

    /// A fire of `job` at `scheduled`; a fraction of a second is dropped.
    public init(job: String, scheduled: Date) {
        self.job = job
        self.scheduled = Date(timeIntervalSince1970: floor(scheduled.timeIntervalSince1970))
    }

    /// `JOB@YYYY-MM-DDThh:mm:ssZ`.
    public var runID: String { "\(job)@\(Self.timestamp(scheduled))" }

    /// `date` in RFC 3339 UTC to the second (a fraction is dropped): `2026-03-08T07:00:00Z`.
    public static func timestamp(_ date: Date) -> String {
        UTCFields(secondsSince1970: Int64(floor(date.timeIntervalSince1970))).description
    }

    /// The run id of a fire of `job` asked for by hand at `date`: `JOB@manual-<RFC 3339
    /// UTC to the millisecond>-<suffix>` (`nightly-sync@manual-2026-03-08T09:12:44.120Z-3f9a1c`).
    /// It is not a scheduled fire's (`parse` refuses it), so a run by hand never takes a
    /// scheduled fire's keys; and each fire by hand has its own, so two asked for in the
    /// same second (or millisecond) are two fires, not one refused as already fired.
    /// `suffix` defaults to 6 random hex digits; it must be 1-16 of `0-9 a-z`.
    public static func manualRunID(job: String, at date: Date, suffix: String = randomSuffix()) -> String {
        precondition((1...16).contains(suffix.utf8.count) && suffix.allSatisfy { $0.isASCIIDigit || ("a"..."z").contains($0) },
                     "a manual run id's suffix is 1-16 of 0-9 a-z")
        return "\(job)@manual-\(millisecondTimestamp(date))-\(suffix)"
    }

    /// 6 random lowercase hex digits: what tells apart fires by hand of one millisecond.
    public static func randomSuffix() -> String {
        let hex = String(UInt32.random(in: 0..<(1 << 24)), radix: 16)
        return String(repeating: "0", count: 6 - hex.count) + hex
    }

    /// `date` in RFC 3339 UTC to the millisecond (a finer fraction is dropped):
    /// `2026-03-08T09:12:44.120Z`.
    public static func millisecondTimestamp(_ date: Date) -> String {
        let milliseconds = Int64(floor(date.timeIntervalSince1970 * 1000))
        let (seconds, fraction) = (milliseconds.floorDiv(1000), milliseconds.floorMod(1000))
        var text = UTCFields(secondsSince1970: seconds).description
        text.removeLast()   // the `Z`
        return text + "." + DecimalText.padded(Int(fraction), 3) + "Z"
    }

    public var description: String { runID }

    /// The run id of `job`'s fire scheduled at `scheduled` (see `runID`).
    public static func runID(job: String, scheduled: Date) -> String {
        FireID(job: job, scheduled: scheduled).runID
    }

    /// The fire a run id names. Throws `.invalidRunID` unless `runID` is exactly a valid
    /// job name, `@`, and `YYYY-MM-DDThh:mm:ssZ` naming a real UTC second.
    public static func parse(_ runID: String) throws -> FireID {
        func fail(_ reason: String) -> SchedulerError {
            SchedulerError(code: .invalidRunID, message: "run id \"\(runID)\": \(reason)")
        }
        guard let at = runID.firstIndex(of: "@") else { throw fail("expected JOB@YYYY-MM-DDThh:mm:ssZ") }
        let job = String(runID[..<at])
        if let problem = JobDefinition.nameProblem(job) { throw fail(problem) }
        let c = Array(runID[runID.index(after: at)...])
        func number(_ range: Range<Int>) -> Int? {
            c[range].allSatisfy(\.isASCIIDigit) ? Int(String(c[range])) : nil
        }
        guard c.count == 20, c[4] == "-", c[7] == "-", c[10] == "T", c[13] == ":", c[16] == ":", c[19] == "Z",
              let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19) else {
            throw fail("expected JOB@YYYY-MM-DDThh:mm:ssZ")
        }
        guard year >= 1, (1...12).contains(month), day >= 1, day <= CivilDate.daysIn(month: month, year: year),
              hour < 24, minute < 60, second < 60 else {
            throw fail("\(String(c)) is not a UTC time")
        }
        let wall = WallTime(year: year, month: month, day: day, hour: hour, minute: minute)
        return FireID(job: job, scheduled: Date(timeIntervalSince1970: Double(wall.seconds + Int64(second))))
    }
}

private extension Int64 {
    /// Division rounded towards minus infinity (times before 1970 keep a fraction in 0..<1000).
    func floorDiv(_ d: Int64) -> Int64 { (self - floorMod(d)) / d }
    func floorMod(_ d: Int64) -> Int64 { ((self % d) + d) % d }
}
