import Foundation
import RunJournal

extension JobScheduler {
    /// The foreground scheduler (`jobs serve`): plans at each scheduled time and runs
    /// the due fires, each job's in order, different jobs at once, at most `concurrency`
    /// at a time (`FirePool`), until `stop` is set; then waits for the running fires to
    /// end and returns. A fire no thread could be started for stays unclaimed: `onError`
    /// hears it and the next pass plans it again.
    ///
    /// A fire that comes due while an earlier fire of its job still runs here is claimed
    /// at once, so the job's `overlap` policy decides it (skip, or queue behind). It
    /// sleeps until the next scheduled time (at most `maxSleep`, so a clock that jumps is
    /// noticed). `onError` hears what could not be planned or recorded (a journal
    /// error); the scheduler goes on.
    public func serve(maxSleep: TimeInterval = 60, onError: @escaping @Sendable (Error) -> Void) {
        let workers = FirePool(limit: concurrency, waiterHelps: false)
        defer { workers.close() }
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
                        do {
                            try workers.enqueue(job: job, runID: fire.runID) { [self] in
                                do { try execute(claim) } catch { onError(error) }
                            }
                        } catch {
                            onError(error)
                            if let record = try? journal.updateFire(id: claim.row.id, FireChange(status: .failed, reason: "\(error)")) {
                                onRecord(record)
                            }
                            claim.lock.release()
                        }
                    } else {
                        do {
                            try workers.enqueue(job: job, runID: fire.runID) { [self] in
                                guard !stop.isSet else { return }
                                do { try self.fire(fire) } catch { onError(error) }
                            }
                        } catch { onError(error) }
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
