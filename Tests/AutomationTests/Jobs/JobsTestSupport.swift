import Foundation
import HubClient
import Scheduler
import RunJournal
import Configuration
import Automation

/// A time from RFC 3339 text (tests only: a bad literal is a test bug).
func at(_ text: String) -> Date {
    let plain = ISO8601DateFormatter()
    guard let date = plain.date(from: text) else { fatalError("not an RFC 3339 time: \(text)") }
    return date
}

/// A clock the test sets.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var date: Date
    init(_ text: String) { date = at(text) }
    var now: Date { lock.withLock { date } }
    func set(_ text: String) { lock.withLock { date = at(text) } }
}

/// An executor double: records each fire it runs, answers `results[runID]` (success
/// by default), and holds a fire whose run id is in `held` until `release`.
final class FakeExecutor: FireExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var ran: [String] = []
    private var resumed: [String] = []
    private var running: Set<String> = []
    private var held: Set<String> = []
    var results: [String: FireResult] = [:]

    func hold(_ runID: String) { condition.withLock { _ = held.insert(runID) } }
    func release(_ runID: String) { condition.withLock { held.remove(runID); condition.broadcast() } }

    /// Waits (up to 10 s) until `runID` is running.
    func waitUntilRunning(_ runID: String) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        return condition.withLock {
            while !running.contains(runID) { if !condition.wait(until: deadline) { return false } }
            return true
        }
    }

    var runs: [String] { condition.withLock { ran } }
    var resumes: [String] { condition.withLock { resumed } }

    func execute(_ fire: FireLaunch) -> FireResult {
        condition.withLock {
            ran.append(fire.runID)
            if fire.resuming { resumed.append(fire.runID) }
            running.insert(fire.runID)
            condition.broadcast()
            while held.contains(fire.runID) { condition.wait() }
            running.remove(fire.runID)
        }
        return results[fire.runID] ?? .succeeded
    }
}

/// A notifier double: keeps each failure; answers `answer` or throws `error`.
final class FakeNotifier: JobFailureNotifier, @unchecked Sendable {
    private let lock = NSLock()
    private var seen: [JobFailure] = []
    var error: Error?
    let answer = "sent to the test double"

    var failures: [JobFailure] { lock.withLock { seen } }

    func notify(_ failure: JobFailure) throws -> String {
        lock.withLock { seen.append(failure) }
        if let error { throw error }
        return answer
    }
}

struct NotifierDown: Error, CustomStringConvertible {
    var description: String { "Dispatch answered 503" }
}

/// A state directory and journal (a file in a temporary folder, or the PostgreSQL
/// journal given), and schedulers over them.
final class JobsFixture: @unchecked Sendable {
    let folder: URL
    let state: StateDirectory
    let clock: TestClock
    let executor = FakeExecutor()
    let notifier = FakeNotifier()
    let location: JournalLocation

    init(now: String, journal: JournalLocation? = nil) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("hubscript-jobs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        state = StateDirectory(explicit: folder.path)
        clock = TestClock(now)
        location = journal ?? .sqlite(path: folder.appendingPathComponent("journal.sqlite").path)
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    func job(_ name: String, _ schedule: String, zone: String = "UTC", overlap: OverlapPolicy = .skip,
             catchUp: CatchUpPolicy = .none, onFailure: String? = nil) throws -> ConfiguredJob {
        ConfiguredJob(definition: try JobDefinition(
            name: name, recipe: "r.lua", schedule: try CronSchedule(schedule, timeZone: zone), overlap: overlap,
            catchUp: catchUp, onFailureDispatch: onFailure), recipe: folder.appendingPathComponent("r.lua"))
    }

    /// A scheduler with its own journal connection (as another process would have);
    /// `host`: with a state directory of its own too (as another host would have).
    func scheduler(_ jobs: [ConfiguredJob], host: String? = nil) throws -> JobScheduler {
        let journal = try Journal(location)
        let clock = self.clock
        let state = host.map { StateDirectory(explicit: folder.appendingPathComponent("host-\($0)").path) } ?? self.state
        let scheduler = JobScheduler(jobs: JobsConfig(source: nil, jobs: jobs), journal: journal, state: state,
                                     executor: executor, notifier: notifier, clock: { clock.now })
        scheduler.pollInterval = 0.01
        return scheduler
    }

    var journal: Journal { get throws { try Journal(location) } }

    /// Minutes 10:00–10:03 of 2026-01-01: `first` and `second` run `runDue` at once each
    /// minute, job a's fire held until both have looked at it. Returns the errors thrown.
    func runDueTogether(_ first: JobScheduler, _ second: JobScheduler) -> [String] {
        var all: [String] = []
        for minute in 0..<4 {
            clock.set("2026-01-01T10:0\(minute):05Z")
            executor.hold("a@2026-01-01T10:0\(minute):00Z")
            let errors = ErrorList()
            let group = DispatchGroup()
            for scheduler in [first, second] {
                group.enter()
                Thread.detachNewThread { [clock] in
                    do { try scheduler.runDue(now: clock.now) } catch { errors.add(error) }
                    group.leave()
                }
            }
            // Hold a's fire until both schedulers have had their look at it.
            if !executor.waitUntilRunning("a@2026-01-01T10:0\(minute):00Z") { all.append("a@10:0\(minute) never ran") }
            Thread.sleep(forTimeInterval: 0.2)
            executor.release("a@2026-01-01T10:0\(minute):00Z")
            group.wait()
            all += errors.all.map { "\($0)" }
        }
        return all
    }

    /// Every fire row, oldest first, as `RUN_ID status[: reason]`.
    func history(_ job: String? = nil) throws -> [String] {
        try journal.fires(job: job, limit: 1000).reversed().map { r in
            "\(r.runID) \(r.status.rawValue)" + (r.reason.map { ": \($0)" } ?? "")
        }
    }
}
