import Foundation

/// The threads fires run on: at most `limit` of them (POSIX threads of the pool's own),
/// each job's fires in the order they were handed, different jobs at once.
///
/// Contracts:
/// - At most `limit` fires run at a time, whatever the number of due jobs (thousands
///   due at once start `limit` threads, not one each). A thread is started only when a
///   fire is ready and no thread is idle, and ends at `close()`.
/// - A thread that cannot be started (`ulimit -u`, systemd's `TasksMax`) never leaves
///   a fire waiting for it: the pool goes on with the threads it has; with none,
///   `enqueue` throws `FireThreadError` and keeps nothing, unless `waiterHelps`
///   (`waitForAll` then runs ready fires on the waiting thread itself).
/// - Thread-safe.
final class FirePool: @unchecked Sendable {
    /// The most fires running at once.
    let limit: Int
    private let condition = NSCondition()
    private struct Item {
        let runID: String
        let work: @Sendable () -> Void
    }
    /// Guarded by `condition`: work not started, per job; jobs with work ready (none of
    /// theirs running), in the order they became ready; jobs running now.
    private var pending: [String: [Item]] = [:]
    private var ready: [String] = []
    private var running: Set<String> = []
    private var dispatched: Set<String> = []
    private var threads = 0
    private var idle = 0
    /// Fires running now (on the pool's threads or a helping waiter): never above `limit`.
    private var active = 0
    private var unfinished = 0
    private var closed = false
    /// Whether `waitForAll` runs ready fires itself (so work never waits for a thread).
    let waiterHelps: Bool

    /// Starts a detached thread running its argument; returns `pthread_create`'s error
    /// if it could not (tests put a failing one in its place).
    private let startThread: (@escaping @Sendable () -> Void) -> Int32?

    init(limit: Int, waiterHelps: Bool,
         startThread: @escaping (@escaping @Sendable () -> Void) -> Int32? = FirePool.startPOSIXThread) {
        self.limit = max(1, limit)
        self.waiterHelps = waiterHelps
        self.startThread = startThread
    }

    /// Whether `job` has a fire running or waiting here.
    func isBusy(_ job: String) -> Bool {
        condition.withLock { running.contains(job) || !(pending[job]?.isEmpty ?? true) }
    }

    /// Whether the fire `runID` was handed here and has not finished.
    func isDispatched(_ runID: String) -> Bool { condition.withLock { dispatched.contains(runID) } }

    /// How many threads the pool has started and not ended.
    var threadCount: Int { condition.withLock { threads } }

    /// Hands `work` (the fire `runID` of `job`) to the pool: it runs after the job's
    /// earlier work. Throws `FireThreadError` (and keeps nothing) when no thread can
    /// run it: none could be started and no waiter helps.
    func enqueue(job: String, runID: String, _ work: @escaping @Sendable () -> Void) throws {
        condition.lock()
        defer { condition.unlock() }
        let wasIdle = !running.contains(job) && (pending[job]?.isEmpty ?? true)
        pending[job, default: []].append(Item(runID: runID, work: work))
        if wasIdle { ready.append(job) }
        dispatched.insert(runID)
        unfinished += 1
        condition.broadcast()
        guard ready.count > idle, threads < limit, active < limit else { return }
        threads += 1
        let started = startThread { [self] in workLoop() }
        guard let failure = started else { return }
        threads -= 1
        guard threads == 0 && !waiterHelps else { return }
        // Nothing will run it: take it back.
        pending[job]?.removeLast()
        if pending[job]?.isEmpty ?? false { pending[job] = nil }
        if wasIdle { ready.removeAll { $0 == job } }
        dispatched.remove(runID)
        unfinished -= 1
        throw FireThreadError(code: failure)
    }

    /// Waits until every fire handed here has finished; if `waiterHelps`, this thread
    /// runs ready fires meanwhile (no fire waits for a thread that could not start).
    func waitForAll() {
        condition.lock()
        while unfinished > 0 {
            if waiterHelps, runOne() { continue }
            condition.wait()
        }
        condition.unlock()
    }

    /// Ends the threads once they are idle; work handed after this still runs.
    func close() {
        condition.withLock {
            closed = true
            condition.broadcast()
        }
    }

    /// With the lock held: runs the next ready fire (unlocking while it runs); false if
    /// none was ready, or `limit` fires already run.
    private func runOne() -> Bool {
        guard !ready.isEmpty, active < limit else { return false }
        let job = ready.removeFirst()
        let item = pending[job]!.removeFirst()
        running.insert(job)
        active += 1
        condition.unlock()
        item.work()
        condition.lock()
        active -= 1
        running.remove(job)
        dispatched.remove(item.runID)
        unfinished -= 1
        if pending[job]?.isEmpty ?? true { pending[job] = nil } else { ready.append(job) }
        condition.broadcast()
        return true
    }

    private func workLoop() {
        condition.lock()
        while true {
            if runOne() { continue }
            if closed { break }
            idle += 1
            condition.wait()
            idle -= 1
        }
        threads -= 1
        condition.broadcast()
        condition.unlock()
    }

    /// Starts a detached thread running `body`; the error code if it could not.
    static func startPOSIXThread(_ body: @escaping @Sendable () -> Void) -> Int32? {
        final class Box { let body: @Sendable () -> Void; init(_ b: @escaping @Sendable () -> Void) { body = b } }
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(&thread, &attributes, { context in
            Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
            return nil
        }, context)
        guard rc != 0 else { return nil }
        Unmanaged<Box>.fromOpaque(context).release()
        return rc
    }
}

/// No thread could be started to run a fire (`pthread_create`'s error).
public struct FireThreadError: Error, CustomStringConvertible {
    public let code: Int32
    public var description: String {
        "cannot start a thread for the fire: \(String(cString: strerror(code))) (too many processes or threads for this user: " +
            "check ulimit -u or the service's TasksMax, or lower jobs --concurrency); it stays due and is tried again"
    }
}
