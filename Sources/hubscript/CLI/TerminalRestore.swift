import Foundation

/// Puts a terminal's saved mode back if the process is killed while it is changed (raw
/// mode at the repl's prompt): SIGTERM, SIGHUP, SIGQUIT or SIGINT sent from outside
/// would otherwise leave the shell without echo or line editing. The handlers the
/// process had before are put back by `end()`.
enum TerminalRestore {
    nonisolated(unsafe) private static var saved = termios()
    nonisolated(unsafe) private static var fd: Int32 = -1
    nonisolated(unsafe) private static var previous: [sigaction] = []
    static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    /// From now until `end()`, a fatal signal first restores `mode` on `terminal`.
    static func begin(_ terminal: Int32, mode: termios) {
        saved = mode
        fd = terminal
        previous = signals.map { number in
            var action = sigaction()
            action.__sigaction_handler.sa_handler = restoreTerminalAndReraise
            sigemptyset(&action.sa_mask)
            var old = sigaction()
            sigaction(number, &action, &old)
            return old
        }
    }

    static func end() {
        fd = -1
        for (number, old) in zip(signals, previous) {
            var old = old
            sigaction(number, &old, nil)
        }
        previous = []
    }

    /// Async-signal-safe: restores the terminal.
    fileprivate static func restore() {
        if fd >= 0 { tcsetattr(fd, TCSANOW, &saved) }
    }
}

/// Restores the terminal, then dies of the same signal.
private func restoreTerminalAndReraise(_ number: Int32) {
    TerminalRestore.restore()
    signal(number, SIG_DFL)
    raise(number)
}
