import Foundation

/// Ends a run that the count hook cannot stop: a long single C call (a runaway
/// pattern match) or a finalizer (Lua runs `__gc` with hooks off).
///
/// Armed for `deadline + grace`; if the run has not finished by then, `action` runs
/// on a background thread. The CLI's action prints the limit message and exits with
/// code 4: there is no safe way to stop a thread inside C code. The Lua thread may be
/// stuck anywhere, including in a write to a pipe nobody reads while it holds the
/// output's lock, so the action must never wait on the run (see
/// `ConsoleOutput.writeBeforeExit`).
/// The pending timer holds the watchdog weakly and `disarm()` drops the action, so a
/// finished run (its output, plugins) is not kept alive until the deadline.
final class Watchdog: @unchecked Sendable {
    private let lock = NSLock()
    private var action: (@Sendable () -> Void)?

    init(seconds: Double, action: @escaping @Sendable () -> Void) {
        self.action = action
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [weak self] in
            guard let self, let action = self.lock.withLock({ self.action }) else { return }
            action()
        }
    }

    func disarm() { lock.withLock { action = nil } }
}

/// The run's VM as other threads may see it while the run goes on: the deadline
/// interrupt and the watchdog's memory figure. `detach()` must run before the VM is
/// freed; after it returns the VM is never touched again.
final class RunningVM: @unchecked Sendable {
    private let lock = NSLock()
    private var vm: LuaVM?

    func attach(_ vm: LuaVM) { lock.withLock { self.vm = vm } }
    func detach() { lock.withLock { vm = nil } }

    /// At the deadline (`seconds` from now), interrupts the Lua thread so the hook raises
    /// the timeout at the next instruction (the hook is otherwise off: see shim.h).
    func interrupt(after seconds: Double) {
        DispatchQueue.global().asyncAfter(deadline: .now() + max(0, seconds)) { [weak self] in
            guard let self else { return }
            self.lock.withLock { self.vm?.interruptForDeadline() }
        }
    }

    /// The Lua state's peak memory so far; 0 once detached. Read from the watchdog's
    /// thread while the Lua thread is stuck: a snapshot, not a synchronised figure.
    var memoryPeak: Int { lock.withLock { vm?.memoryPeak ?? 0 } }
}
