import Foundation

/// Ends a run that the count hook cannot stop: a long single C call (a runaway
/// pattern match) or a finalizer (Lua runs `__gc` with hooks off).
///
/// Armed for `deadline + grace`; if the run has not finished by then, `action` runs
/// on a background thread. The CLI's action flushes output, prints the limit message
/// and exits with code 4: there is no safe way to stop a thread inside C code.
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

/// At the deadline, interrupts the Lua thread so the hook raises the timeout at the
/// next instruction (the hook is otherwise off: see shim.h). `disarm()` must run
/// before the VM is freed; after it returns the VM is never touched again.
final class DeadlineInterrupter: @unchecked Sendable {
    private let lock = NSLock()
    private var vm: LuaVM?

    init(vm: LuaVM, seconds: Double) {
        self.vm = vm
        DispatchQueue.global().asyncAfter(deadline: .now() + max(0, seconds)) { [weak self] in
            guard let self else { return }
            self.lock.withLock { self.vm?.interruptForDeadline() }
        }
    }

    func disarm() { lock.withLock { vm = nil } }
}
