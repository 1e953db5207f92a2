import Foundation

extension JobScheduler {
    /// The foreground scheduler (`jobs serve`): plans at each scheduled time and runs
    /// the due fires, each job's in order on its own queue, different jobs at once, until
    /// `stop` is set; then waits for the running fires to end and returns.
    ///
    /// A fire that comes due while an earlier fire of its job still runs here is claimed
    /// at once, so the job's `overlap` policy decides it (skip, or queue behind). It
    /// sleeps until the next scheduled time (at most `maxSleep`, so a clock that jumps is
    /// noticed). `onError` hears what could not be planned or recorded (a journal
    /// error); the scheduler goes on.
    public func serve(maxSleep: TimeInterval = 60, onError: @escaping @Sendable (Error) -> Void) {
        let workers = JobWorkers()
        while !stop.isSet {
            let due: [DueFire]
            do { due = try plan(now: clock()).filter { !workers.isDispatched($0.runID) } } catch {
                // A journal that stays locked or fails: say so, look again at the next time.
                onError(error)
                due = []
            }
            var byJob: [String: [DueFire]] = [:]
            for fire in due { byJob[fire.job.name, default: []].append(fire) }
            for (job, fires) in byJob.sorted(by: { $0.key < $1.key }) {
                let busy = workers.isBusy(job)
                for fire in fires {
                    if busy {
                        // Decided now, against the fire that runs: skipped, or queued behind it.
                        let claimed: FireClaim?
                        do { claimed = try claim(fire) } catch { onError(error); continue }
                        guard let claim = claimed else { continue }
                        workers.enqueue(job: job, runID: fire.runID) { [self] in
                            do { try execute(claim) } catch { onError(error) }
                        }
                    } else {
                        workers.enqueue(job: job, runID: fire.runID) { [self] in
                            guard !stop.isSet else { return }
                            do { try self.fire(fire) } catch { onError(error) }
                        }
                    }
                }
            }
            let now = clock()
            let untilNext = nextFire(after: now).map { $0.timeIntervalSince(now) + 0.005 } ?? maxSleep
            stop.wait(timeout: min(max(untilNext, 0.005), maxSleep))
        }
        workers.waitForAll()
    }
}

/// One serial queue per job, and what each has been handed and not finished.
final class JobWorkers: @unchecked Sendable {
    private let lock = NSLock()
    private var queues: [String: DispatchQueue] = [:]
    private var pending: [String: Int] = [:]
    private var dispatched: Set<String> = []
    private let group = DispatchGroup()

    /// Whether `job` has a fire running or waiting here.
    func isBusy(_ job: String) -> Bool { lock.withLock { pending[job, default: 0] > 0 } }

    /// Whether the fire `runID` was handed to a queue and has not finished.
    func isDispatched(_ runID: String) -> Bool { lock.withLock { dispatched.contains(runID) } }

    func enqueue(job: String, runID: String, _ work: @escaping @Sendable () -> Void) {
        let queue: DispatchQueue = lock.withLock {
            pending[job, default: 0] += 1
            dispatched.insert(runID)
            if let queue = queues[job] { return queue }
            let queue = DispatchQueue(label: "hubscript.jobs.\(job)")
            queues[job] = queue
            return queue
        }
        group.enter()
        queue.async { [self] in
            work()
            lock.withLock {
                pending[job, default: 1] -= 1
                dispatched.remove(runID)
            }
            group.leave()
        }
    }

    func waitForAll() { group.wait() }
}
