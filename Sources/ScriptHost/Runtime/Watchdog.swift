import Foundation

/// Ends a run that the count hook cannot stop: a long single C call (a runaway
/// pattern match) or a finalizer (Lua runs `__gc` with hooks off).
///
/// Armed for `deadline + grace`; if the run has not finished by then, `action` runs
/// on a background thread. The CLI's action flushes output, prints the limit message
/// and exits with code 4: there is no safe way to stop a thread inside C code.
final class Watchdog: @unchecked Sendable {
    private let lock = NSLock()
    private var finished = false

    init(seconds: Double, action: @escaping @Sendable () -> Void) {
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in
            let fire = lock.withLock { !finished }
            if fire { action() }
        }
    }

    func disarm() { lock.withLock { finished = true } }
}

/// At the deadline, interrupts the Lua thread so the hook raises the timeout at the
/// next instruction (the hook is otherwise off: see shim.h). `disarm()` must run
/// before the VM is freed; after it returns the VM is never touched again.
final class DeadlineInterrupter: @unchecked Sendable {
    private let lock = NSLock()
    private var vm: LuaVM?

    init(vm: LuaVM, seconds: Double) {
        self.vm = vm
        DispatchQueue.global().asyncAfter(deadline: .now() + max(0, seconds)) { [self] in
            lock.withLock { self.vm?.interruptForDeadline() }
        }
    }

    func disarm() { lock.withLock { vm = nil } }
}
