import Foundation

/// The run's two deadlines, kept by one background thread of its own: at the timeout
/// it interrupts the Lua thread (`RunningVM.interruptForDeadline`); at the timeout
/// plus a grace it runs the watchdog action, which ends a run the count hook cannot
/// stop: a long single C call (a runaway pattern match) or a finalizer (Lua runs `__gc`
/// with hooks off).
///
/// The CLI's watchdog action prints the limit message and exits with code 4: there is
/// no safe way to stop a thread inside C code. The Lua thread may be stuck anywhere,
/// including in a write to a pipe nobody reads while it holds the output's lock, so
/// the action must never wait on the run (see `ConsoleOutput.writeBeforeExit`).
///
/// A plain POSIX thread waiting on a condition over `CLOCK_MONOTONIC` (the clock of
/// `MonotonicClock` and of the hook's deadline), not a Dispatch timer: the first use of
/// Dispatch in a process starts its whole machinery (an epoll loop, a timer descriptor
/// and a worker thread), which every start would pay. `disarm()` drops
/// both actions and ends the thread, so a finished run (its output, plugins, VM) is
/// not kept alive until the deadline.
final class Watchdog: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// Guarded by `mutex`.
    private var interrupt: (at: Double, action: @Sendable () -> Bool)?
    private var action: (at: Double, action: @Sendable () -> Void)?
    private var disarmed = false
    /// An action is running (taken from its slot, not yet returned).
    private var acting = false

    /// Arms the watchdog: `action` runs on the watchdog's thread `seconds` from now
    /// unless `disarm()` came first. Throws if no thread can be started.
    init(seconds: Double, action: @escaping @Sendable () -> Void) throws {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
        self.action = (MonotonicClock.now() + seconds, action)
        try startThread()
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// How often the interrupt is sent again while the run's VM is still attached after
    /// its deadline (seconds): a signal that arrived while the hook was resetting itself
    /// is not lost for good.
    static let interruptRepeat = 0.2

    /// At the deadline (`seconds` from now), interrupts `running`'s Lua thread so the
    /// hook raises the timeout at the next instruction (the hook is otherwise off: see
    /// shim.h), and again every `interruptRepeat` until the VM is detached.
    func interrupt(_ running: RunningVM, after seconds: Double) {
        let at = MonotonicClock.now() + max(0, seconds)
        let action: @Sendable () -> Bool = { [weak running] in running?.interruptForDeadline() ?? false }
        locked { interrupt = (at, action) }
        pthread_cond_broadcast(condition)
    }

    /// Drops both actions and ends the thread. When it returns no action is running and
    /// none will start: one already under way is waited for (the interrupt is quick; the
    /// CLI's watchdog action ends the process).
    func disarm() {
        pthread_mutex_lock(mutex)
        disarmed = true
        interrupt = nil
        action = nil
        pthread_cond_broadcast(condition)
        while acting { pthread_cond_wait(condition, mutex) }
        pthread_mutex_unlock(mutex)
    }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }

    private func startThread() throws {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        // The action formats a report and writes it: plenty, but far from the default 8 MiB.
        pthread_attr_setstacksize(&attributes, 512 * 1024)
        let context = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(&thread, &attributes, { context in
            let watchdog = Unmanaged<Watchdog>.fromOpaque(context!).takeRetainedValue()
            watchdog.wait()
            return nil
        }, context)
        if rc != 0 {
            Unmanaged<Watchdog>.fromOpaque(context).release()
            throw WatchdogError(code: rc)
        }
    }

    /// The thread's loop: sleeps until the earlier pending deadline, runs its action
    /// (outside the lock), until disarmed or both actions ran.
    private func wait() {
        pthread_mutex_lock(mutex)
        while !disarmed {
            let next = [interrupt?.at, action?.at].compactMap { $0 }.min()
            guard let next else { break }
            let now = MonotonicClock.now()
            if now < next {
                // At most a day at a time: an absurd or infinite deadline stays a number
                // `timespec` can hold (the loop just waits again).
                let wake = min(next, now + 86_400)
                var until = timespec(tv_sec: Int(wake), tv_nsec: Int((wake - wake.rounded(.down)) * 1e9))
                if until.tv_nsec >= 1_000_000_000 { until.tv_sec += 1; until.tv_nsec -= 1_000_000_000 }
                pthread_cond_timedwait(condition, mutex, &until)
                continue
            }
            if let pending = interrupt, pending.at <= now {
                interrupt = nil
                acting = true
                pthread_mutex_unlock(mutex)
                let attached = pending.action()
                pthread_mutex_lock(mutex)
                if attached && !disarmed && interrupt == nil {
                    interrupt = (MonotonicClock.now() + Watchdog.interruptRepeat, pending.action)
                }
            } else {
                let due = action!.action
                action = nil
                acting = true
                pthread_mutex_unlock(mutex)
                due()
                pthread_mutex_lock(mutex)
            }
            acting = false
            pthread_cond_broadcast(condition)
        }
        pthread_mutex_unlock(mutex)
    }
}

/// No thread could be started for the run's watchdog (`pthread_create`'s error).
struct WatchdogError: Error, CustomStringConvertible {
    let code: Int32
    var description: String {
        "cannot start the run's watchdog thread: \(String(cString: strerror(code))); too many processes or threads?"
    }
}

/// The run's VM as other threads may see it while the run goes on: the deadline
/// interrupt and the watchdog's memory figure. `detach()` must run before the VM is
/// freed; after it returns the VM is never touched again.
final class RunningVM: @unchecked Sendable {
    /// An NSLock, not a Mutex: the VM is not Sendable and is shared on purpose with the
    /// watchdog's thread, which a Mutex's region checking cannot express.
    private let lock = NSLock()
    private var vm: LuaVM?

    func attach(_ vm: LuaVM) { lock.withLock { self.vm = vm } }
    func detach() { lock.withLock { vm = nil } }

    /// Interrupts the Lua thread so the hook raises the timeout at the next instruction;
    /// false once detached (nothing to interrupt).
    func interruptForDeadline() -> Bool {
        lock.withLock {
            guard let vm else { return false }
            vm.interruptForDeadline()
            return true
        }
    }

    /// The Lua state's peak memory so far; 0 once detached. Read from the watchdog's
    /// thread while the Lua thread is stuck: a snapshot, not a synchronised figure.
    var memoryPeak: Int { lock.withLock { vm?.memoryPeak ?? 0 } }
}
