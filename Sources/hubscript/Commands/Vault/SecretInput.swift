import Foundation
import Vault

/// Reads secret values and passphrases straight into locked memory (`SecretBytes`),
/// never through a Swift string, never from the command line.
enum SecretInput {
    /// All of standard input (not a terminal), less one trailing newline ("\n" or
    /// "\r\n", so `echo value |` stores `value`). At most `limit` bytes.
    static func standardInput(limit: Int) throws -> SecretBytes {
        var buffer = try SecretBytes(count: 0, capacity: 4096)
        while buffer.count <= limit + 2 {
            if buffer.count == buffer.capacity {
                let bigger = try SecretBytes(count: buffer.count, capacity: buffer.capacity * 2)
                buffer.withUnsafeBytes { old in bigger.withUnsafeMutableBytes { $0.copyMemory(from: old) } }
                buffer = bigger
            }
            var end = false
            try buffer.append { free in
                while true {
                    let n = read(0, free.baseAddress, free.count)
                    if n >= 0 { end = n == 0; return n }
                    guard errno == EINTR else {
                        throw VaultError(.ioError, "cannot read standard input: \(String(cString: strerror(errno)))")
                    }
                }
            }
            if end { break }
        }
        dropNewline(buffer)
        guard buffer.count <= limit else {
            throw VaultError(.invalidValue, "the value on standard input is over \(limit >> 20) MiB: store it as an object (hubscript vault put-object)")
        }
        return buffer
    }

    /// Drops one trailing "\n" or "\r\n".
    static func dropNewline(_ bytes: SecretBytes) {
        if bytes.withUnsafeBytes({ $0.last == 0x0A }) {
            bytes.truncate(to: bytes.count - 1)
            if bytes.withUnsafeBytes({ $0.last == 0x0D }) { bytes.truncate(to: bytes.count - 1) }
        }
    }

    /// Prompts on the terminal with echo off and reads one line; nil when there is no
    /// terminal (standard input, else /dev/tty). The terminal's settings come back
    /// afterwards, and also if a signal (Ctrl-C, SIGTERM, SIGHUP) ends the process
    /// while it waits.
    static func prompt(_ text: String, limit: Int) throws -> SecretBytes? {
        let fd: Int32
        var ownFD = false
        if isatty(0) != 0 {
            fd = 0
        } else {
            fd = open("/dev/tty", O_RDWR | O_CLOEXEC)
            guard fd >= 0 else { return nil }
            ownFD = true
        }
        defer { if ownFD { close(fd) } }
        // Echo goes off before the prompt shows, so nothing typed after it is echoed.
        EchoOff.begin(fd)
        let shown = Data(text.utf8)
        shown.withUnsafeBytes { _ = write(ownFD ? fd : 2, $0.baseAddress, $0.count) }
        defer {
            EchoOff.end()
            _ = write(ownFD ? fd : 2, "\n", 1)
        }
        let line = try SecretBytes(count: 0, capacity: limit + 1)
        var byte: UInt8 = 0
        while line.count <= limit {
            let n = read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 || byte == 0x0A { break }
            line.append { free in
                free[0] = byte
                return 1
            }
        }
        byte = 0
        guard line.count <= limit else { throw VaultError(.invalidValue, "the value typed is over \(limit) bytes") }
        if line.withUnsafeBytes({ $0.last == 0x0D }) { line.truncate(to: line.count - 1) }
        return line
    }
}

/// Terminal echo off for one prompt, restored by `end()` or by a signal handler.
private enum EchoOff {
    nonisolated(unsafe) static var saved = termios()
    nonisolated(unsafe) static var fd: Int32 = -1
    static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    static func begin(_ terminal: Int32) {
        guard tcgetattr(terminal, &saved) == 0 else { return }
        fd = terminal
        for s in signals { signal(s, restoreAndReraise) }
        var silent = saved
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(terminal, TCSAFLUSH, &silent)
    }

    static func end() {
        guard fd >= 0 else { return }
        tcsetattr(fd, TCSAFLUSH, &saved)
        fd = -1
        for s in signals { signal(s, SIG_DFL) }
    }
}

/// Async-signal-safe: restores the terminal, then dies of the same signal.
private func restoreAndReraise(_ number: Int32) {
    if EchoOff.fd >= 0 { tcsetattr(EchoOff.fd, TCSANOW, &EchoOff.saved) }
    signal(number, SIG_DFL)
    raise(number)
}
