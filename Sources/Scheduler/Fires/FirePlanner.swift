import Foundation

/// What to do about a job's scheduled times at one moment: which run now, which are
/// recorded as missed.
public struct FirePlan: Hashable, Sendable {
    /// The scheduled times to run now, oldest first.
    public var due: [Date]
    /// The first and last scheduled times that passed without a run and will not get one;
    /// every fire of the schedule in this range, both ends included, was missed (list
    /// them with `schedule.fires(in:)`). Nil when nothing was missed.
    public var missed: ClosedRange<Date>?

    public init(due: [Date], missed: ClosedRange<Date>?) {
        self.due = due
        self.missed = missed
    }

    /// The latest scheduled time this plan settles, run or missed: what to record as the
    /// job's last fire once the plan is carried out. Nil when the plan is empty.
    public var settledThrough: Date? {
        [due.last, missed?.upperBound].compactMap { $0 }.max()
    }
}

/// Decides which fires are due, as a pure function of the schedule, the last fire the
/// journal recorded, the time now and the catch-up policy.
///
/// With `grace` (60 s unless given), the scheduled times after `lastFire` and up to `now`
/// split in two:
/// - **on time**: later than `now - grace`. They are always due — `jobs run-due` from a
///   crontab line each minute starts a few seconds after the minute.
/// - **late**: at or before `now - grace`. `catchUp` decides: `.none` runs none,
///   `.latest` runs the latest one if nothing is on time, `.all(max: n)` runs the `n`
///   latest; every late fire that does not run is missed.
///
/// `lastFire` is the scheduled time of the latest fire the journal recorded in any
/// outcome (ran, skipped or missed: see `FirePlan.settledThrough`), so no time is
/// planned twice. A job with no record (`nil`) has missed nothing: only on-time fires
/// are due. A `lastFire` after `now` (a clock set back) makes nothing due until `now`
/// passes it. The work is a few schedule searches per fire returned, however long the
/// outage was: missed fires are returned as a range, not a list.
public enum FirePlanner {
    /// How late a fire may start and still count as on time.
    public static let defaultGrace: TimeInterval = 60

    /// The plan for `schedule` at `now`. `grace` must be positive.
    public static func plan(
        _ schedule: CronSchedule, lastFire: Date?, now: Date, catchUp: CatchUpPolicy,
        grace: TimeInterval = defaultGrace
    ) -> FirePlan {
        precondition(grace > 0, "grace must be positive")
        let cutoff = now.addingTimeInterval(-grace)
        var due: [Date] = []
        var cursor = max(lastFire ?? cutoff, cutoff)
        while let fire = schedule.nextFire(after: cursor), fire <= now {
            due.append(fire)
            cursor = fire
        }
        guard let lastFire, lastFire < cutoff else { return FirePlan(due: due, missed: nil) }

        // Late fires, newest first: those the policy runs, then the missed ones.
        let runLate: Int = switch catchUp {
        case .none: 0
        case .latest: due.isEmpty ? 1 : 0
        case .all(let max): Swift.max(0, max)
        }
        func late(before date: Date) -> Date? {
            schedule.previousFire(before: date).flatMap { $0 > lastFire ? $0 : nil }
        }
        // Fires are whole seconds: the latest one at or before the cutoff.
        var newestMissed = late(before: Date(timeIntervalSince1970: floor(cutoff.timeIntervalSince1970) + 1))
        var caughtUp: [Date] = []
        while caughtUp.count < runLate, let fire = newestMissed {
            caughtUp.append(fire)
            newestMissed = late(before: fire)
        }
        let missed = newestMissed.flatMap { last in schedule.nextFire(after: lastFire).map { $0...last } }
        return FirePlan(due: caughtUp.reversed() + due, missed: missed)
    }
}
