import Foundation
import HubClient
import Scheduler
import RunJournal
import Configuration
import Synchronization

/// A fire the scheduler decided to run: scheduled (on time, caught up, or an
/// interrupted one to resume) or asked for by hand.
public struct DueFire: Sendable {
    public let job: ConfiguredJob
    public let scheduled: Date
    public let runID: String
    public let trigger: FireTrigger
    /// The interrupted fire's row, when this resumes it.
    public let interrupted: FireRecord?
}

/// A fire claimed under its run's lock and recorded, ready to run (after the fires it
/// queues behind).
public struct FireClaim: Sendable {
    public let due: DueFire
    public let row: FireRecord
    public let lock: any HeldRunLock
    /// Run ids of earlier fires of the job this one waits for (`overlap = "queue"`).
    public let waitsFor: [String]
}

/// Applies the jobs' schedules, catch-up and overlap policies over the journal.
///
/// Contracts:
/// - A fire's run id is `FireID` (`JOB@<scheduled time>`). It is claimed under that
///   run id's lock (`Journal.runLocks`: every host's, on a PostgreSQL journal) and recorded in the journal's `fires` table before it runs; a
///   second scheduler (another process on the same state directory, or this one) that
///   finds the lock held, or the fire already run, records it `skipped: already fired`.
///   So each scheduled fire runs at most once, whoever fires it.
/// - `plan` decides in one journal transaction per job (`Journal.settleFires`), with
///   `FirePlanner`: late fires the job's `catch_up` does not run are recorded missed
///   (one row for the range); a fire claimed but interrupted (its process died) is due
///   again and resumes the journalled run.
/// - Overlap: a fire that comes due while another claimed fire of the job still holds
///   its lock is recorded skipped (`overlap = "skip"`), or claimed `queued` and run
///   after every fire of the job claimed before it (`"queue"`).
/// - Every outcome is a `fires` row: fired, skipped, missed, failed, succeeded, with
///   start, end, duration and exit code. A failed fire of a job with `on_failure` is
///   handed to the `JobFailureNotifier`.
public final class JobScheduler: @unchecked Sendable {
    public let jobs: JobsConfig
    public let journal: Journal
    let state: StateDirectory
    /// The journal's run locks (shared by every host on a PostgreSQL journal).
    let locks: any RunLocks
    let executor: any FireExecutor
    let notifier: any JobFailureNotifier
    /// The scheduler's time (`--now` shifts it).
    public let clock: @Sendable () -> Date
    /// Hears every fire's final record (and each missed range) as it is recorded.
    public var onRecord: @Sendable (FireRecord) -> Void = { _ in }
    /// How late a fire may start and still count as on time (`FirePlanner`).
    public var grace: TimeInterval = FirePlanner.defaultGrace
    /// How often a queued fire looks whether the fires it waits for have ended.
    public var pollInterval: TimeInterval = 0.1
    /// The most fires that run at once (`jobs run-due` and `jobs serve`: `--concurrency`).
    public var concurrency = JobScheduler.defaultConcurrency
    /// `concurrency` unless told otherwise.
    public static let defaultConcurrency = 8
    /// Set to stop: no fire starts after it is set; running ones finish.
    public let stop = StopSignal()

    public init(jobs: JobsConfig, journal: Journal, state: StateDirectory, executor: any FireExecutor,
                notifier: any JobFailureNotifier = UnsentFailureNotifier(),
                clock: @escaping @Sendable () -> Date = { Date() }) {
        self.jobs = jobs
        self.journal = journal
        self.state = state
        self.locks = journal.runLocks(state: state)
        self.executor = executor
        self.notifier = notifier
        self.clock = clock
    }

    // MARK: - Deciding

    /// What is due at `now`, oldest first within each job: interrupted fires to resume,
    /// then the planner's. Records missed ranges (and reports them).
    public func plan(now: Date) throws -> [DueFire] {
        var due: [DueFire] = []
        for job in jobs.jobs {
            for row in try journal.activeFires(job: job.name)
            where row.trigger == .schedule && !locks.isHeld(row.runID) {
                due.append(DueFire(job: job, scheduled: row.scheduledAt, runID: row.runID, trigger: .schedule,
                                   interrupted: row))
            }
            let definition = job.definition
            let (plan, missed) = try journal.settleFires(job: job.name) { last -> (FirePlan, [NewFire]) in
                let plan = FirePlanner.plan(definition.schedule, lastFire: last, now: now,
                                            catchUp: definition.catchUp, grace: grace)
                guard let missed = plan.missed else { return (plan, []) }
                return (plan, [NewFire(job: job.name, scheduledAt: missed.lowerBound, missedThrough: missed.upperBound,
                                       runID: FireID.runID(job: job.name, scheduled: missed.lowerBound),
                                       status: .missed, reason: missedReason(definition, missed))])
            }
            missed.forEach(onRecord)
            due += plan.due.map {
                DueFire(job: job, scheduled: $0, runID: FireID.runID(job: job.name, scheduled: $0), trigger: .schedule,
                        interrupted: nil)
            }
        }
        return due
    }

    /// `missed N fires through TIME (catch_up …)`; N is counted up to 10,000.
    func missedReason(_ job: JobDefinition, _ range: ClosedRange<Date>) -> String {
        let cap = 10_000
        let count = job.schedule.fires(in: range).prefix(cap + 1).reduce(0) { n, _ in n + 1 }
        let fires = count > cap ? "more than \(cap) fires" : count == 1 ? "1 fire" : "\(count) fires"
        let policy: String = switch job.catchUp {
        case .none: "none"
        case .latest: "latest"
        case .all(let max): "{ all = \(max) }"
        }
        return "\(fires) through \(FireID.timestamp(range.upperBound)), late by \(Int(grace)) s or more (catch_up \(policy))"
    }

    /// A fire of `job` by hand, now: a run id of its own, `JOB@manual-<now, to the
    /// millisecond>-<random>` (`FireID.manualRunID`), so fires by hand never collide.
    public func manualFire(_ job: ConfiguredJob) -> DueFire {
        let now = clock()
        return DueFire(job: job, scheduled: now, runID: FireID.manualRunID(job: job.name, at: now), trigger: .manual,
                       interrupted: nil)
    }

    /// Claims `due` under its run's lock. Nil when it must not run here: another
    /// scheduler holds or ran it, or the overlap policy skipped it (each recorded and
    /// reported), or it was already decided.
    public func claim(_ due: DueFire) throws -> FireClaim? {
        let lock: any HeldRunLock
        do { lock = try locks.acquire(due.runID) } catch let busy as RunLock.Busy {
            let holder = busy.pid.map { "running in process \($0)" + (busy.host.map { " on \($0)" } ?? "") } ?? "running"
            try skip(due, row: nil, reason: "\(Self.alreadyFired) (\(holder))")
            return nil
        }
        var keep = false
        defer { if !keep { lock.release() } }
        let rows = try journal.fires(runID: due.runID)
        if let done = rows.first(where: { $0.status == .succeeded || $0.status == .failed }) {
            try skip(due, row: nil, reason: "\(Self.alreadyFired) (\(done.status.rawValue))")
            return nil
        }
        if rows.contains(where: { $0.status == .skipped && !($0.reason ?? "").hasPrefix(Self.alreadyFired) }) {
            return nil   // the overlap policy decided it, here or in another scheduler
        }
        // With the lock held, a queued or fired row is an interrupted claim: resume it.
        let interrupted = rows.last(where: { $0.status == .queued || $0.status == .fired })
        let others = try journal.activeFires(job: due.job.name)
            .filter { $0.runID != due.runID && locks.isHeld($0.runID) }
        if let running = others.last, due.job.definition.overlap == .skip {
            try skip(due, row: interrupted, reason: "overlap: \(running.runID) is still running (overlap skip)")
            return nil
        }
        let reason = others.last.map { "queued behind \($0.runID) (overlap queue)" }
            ?? (interrupted != nil ? "resumed after an interrupted run" : nil)
        let row = try interrupted.map { try journal.updateFire(id: $0.id, FireChange(status: .queued, reason: reason)) }
            ?? journal.recordFire(NewFire(job: due.job.name, scheduledAt: due.scheduled, trigger: due.trigger,
                                          runID: due.runID, status: .queued, reason: reason))
        keep = true
        return FireClaim(due: due, row: row, lock: lock, waitsFor: others.map(\.runID))
    }

    static let alreadyFired = "already fired"

    private func skip(_ due: DueFire, row: FireRecord?, reason: String) throws {
        let record = try row.map { try journal.updateFire(id: $0.id, FireChange(status: .skipped, reason: reason)) }
            ?? journal.recordFire(NewFire(job: due.job.name, scheduledAt: due.scheduled, trigger: due.trigger,
                                          runID: due.runID, status: .skipped, reason: reason))
        onRecord(record)
    }

    // MARK: - Running

    /// Runs a claimed fire once the fires it waits for have ended, records the outcome
    /// and releases its lock. A stop while it waits records it skipped instead.
    @discardableResult
    public func execute(_ claim: FireClaim) throws -> FireRecord {
        defer { claim.lock.release() }
        while claim.waitsFor.contains(where: { locks.isHeld($0) }) {
            if stop.wait(timeout: pollInterval) {
                let record = try journal.updateFire(id: claim.row.id, FireChange(
                    status: .skipped, reason: "the scheduler stopped before the fire started"))
                onRecord(record)
                return record
            }
        }
        if stop.isSet {
            let record = try journal.updateFire(id: claim.row.id, FireChange(
                status: .skipped, reason: "the scheduler stopped before the fire started"))
            onRecord(record)
            return record
        }
        let started = clock()
        _ = try journal.updateFire(id: claim.row.id, FireChange(status: .fired, startedAt: started))
        let job = claim.due.job
        let result = executor.execute(FireLaunch(job: job, runID: claim.due.runID, lock: claim.lock,
                                                 resuming: claim.due.interrupted != nil, row: claim.row.id))
        let finished = clock()
        var change = FireChange(status: result.exitCode == 0 ? .succeeded : .failed, finishedAt: finished,
                                durationMs: Int((finished.timeIntervalSince(started) * 1000).rounded()),
                                exitCode: Int(result.exitCode))
        if result.exitCode != 0 {
            let message = result.message ?? "the recipe exited with code \(result.exitCode)"
            change.reason = Self.oneLine(message)
            if let target = job.definition.onFailureDispatch {
                let failure = JobFailure(job: job.name, runID: claim.due.runID, exitCode: result.exitCode,
                                         message: message, dispatch: target)
                do { change.notified = try notifier.notify(failure) } catch {
                    change.notified = "dispatch \"\(target)\" not notified: \(error)"
                }
            }
        }
        let record = try journal.updateFire(id: claim.row.id, change)
        onRecord(record)
        return record
    }

    /// Claims and runs `due`; nil when it was not run here (see `claim`).
    @discardableResult
    public func fire(_ due: DueFire) throws -> FireRecord? {
        guard let claim = try claim(due) else { return nil }
        return try execute(claim)
    }

    /// One pass (what `jobs run-due` does): plans at `now`, then runs each job's due
    /// fires in order, different jobs at once, at most `concurrency` at a time (on a
    /// `FirePool`; this thread runs fires too, so none waits for a thread that could not
    /// start). Returns when every fire has ended; after `stop`, no further fire starts.
    /// Errors of one job's fires do not stop the others': the first is rethrown at the end.
    public func runDue(now: Date) throws {
        let due = try plan(now: now)
        var byJob: [String: [DueFire]] = [:]
        for fire in due { byJob[fire.job.name, default: []].append(fire) }
        let errors = ErrorBox()
        let pool = FirePool(limit: concurrency, waiterHelps: true)
        defer { pool.close() }
        for (job, fires) in byJob.sorted(by: { $0.key < $1.key }) {
            for fire in fires {
                // Never throws: the waiter helps.
                try pool.enqueue(job: job, runID: fire.runID) { [self] in
                    guard !stop.isSet else { return }
                    do { try self.fire(fire) } catch { errors.keep(error) }
                }
            }
        }
        pool.waitForAll()
        if let error = errors.first { throw error }
    }

    /// The earliest scheduled fire of any job after `date`.
    public func nextFire(after date: Date) -> Date? {
        jobs.jobs.compactMap { $0.definition.schedule.nextFire(after: date) }.min()
    }

    /// `text`'s first line, at most 500 characters.
    static func oneLine(_ text: String) -> String {
        let line = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        return line.count > 500 ? String(line.prefix(499)) + "…" : line
    }
}

/// The first error thrown on any of several threads.
final class ErrorBox: Sendable {
    private let errors = Mutex<[any Error]>([])
    func keep(_ error: any Error) { errors.withLock { $0.append(error) } }
    var first: (any Error)? { errors.withLock { $0.first } }
}

/// A flag set once (by a signal handler's queue, or a test) that sleepers wake on.
public final class StopSignal: @unchecked Sendable {
    private let condition = NSCondition()
    private var set = false

    public init() {}

    public var isSet: Bool { condition.withLock { set } }

    /// Sets the flag and wakes every waiter.
    public func fire() {
        condition.withLock {
            set = true
            condition.broadcast()
        }
    }

    /// Waits up to `timeout` seconds; true if the flag is (or becomes) set.
    @discardableResult
    public func wait(timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(max(0, timeout))
        return condition.withLock {
            while !set && Date() < deadline { _ = condition.wait(until: deadline) }
            return set
        }
    }
}
