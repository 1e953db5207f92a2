import Foundation

/// Puts a terminal's saved mode back if the process is killed while it is changed (raw
/// mode at the repl's prompt): SIGTERM, SIGHUP, SIGQUIT or SIGINT sent from outside
/// would otherwise leave the shell without echo or line editing.
enum TerminalRestore {
    nonisolated(unsafe) private static var saved = termios()
    nonisolated(unsafe) private static var fd: Int32 = -1
    static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    /// From now until `end()`, a fatal signal first restores `mode` on `terminal`.
    static func begin(_ terminal: Int32, mode: termios) {
        saved = mode
        fd = terminal
        for s in signals { signal(s, restoreTerminalAndReraise) }
    }

    static func end() {
        fd = -1
        for s in signals { signal(s, SIG_DFL) }
    }

    /// Async-signal-safe: restores the terminal, then dies of the same signal.
    fileprivate static func restore() {
        if fd >= 0 { tcsetattr(fd, TCSANOW, &saved) }
    }
}

private func restoreTerminalAndReraise(_ number: Int32) {
    TerminalRestore.restore()
    signal(number, SIG_DFL)
    raise(number)
}
