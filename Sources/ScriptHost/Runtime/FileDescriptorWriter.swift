import Foundation
import SystemText

/// Writes lines to a file descriptor as they are made: a line is staged in a fixed
/// 64 KiB buffer and goes out with one `write(2)` when it ends, so nothing waits in
/// the process for a later flush (a consumer sees each line at once; after `kill -9`
/// every finished line is out). A piece larger than the buffer is written straight
/// from the caller's memory, never copied.
///
/// Once its `redactor` (the process's, for the process's descriptors) holds a secret, a
/// line is kept whole until it ends (however long) and masked before it is written, so
/// no secret can straddle two writes.
///
/// Not thread-safe: the owner serialises calls (ConsoleOutput holds its lock).
final class FileDescriptorWriter: ByteSink {
    let fd: Int32
    /// What masks every line written.
    let redactor: SecretRedactor
    private let storage: UnsafeMutableRawBufferPointer
    private var used = 0
    /// The line so far when it outgrew `storage` while secrets are masked.
    private var overflow: [UInt8] = []

    init(fd: Int32, redactor: SecretRedactor, capacity: Int = 64 << 10) {
        self.fd = fd
        self.redactor = redactor
        storage = .allocate(byteCount: capacity, alignment: 1)
    }

    deinit { storage.deallocate() }

    func put(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        if redactor.isActive, !overflow.isEmpty || bytes.count > storage.count - used {
            overflow.append(contentsOf: UnsafeRawBufferPointer(rebasing: storage[0..<used]))
            overflow.append(contentsOf: bytes)
            used = 0
            return
        }
        if bytes.count > storage.count - used {
            writeStaged()
            if bytes.count >= storage.count {
                FileDescriptorWriter.writeMasked(fd, bytes, masking: redactor)
                return
            }
        }
        UnsafeMutableRawBufferPointer(rebasing: storage[used..<used + bytes.count]).copyMemory(from: bytes)
        used += bytes.count
    }

    func put(_ text: String) {
        var text = text
        text.withUTF8 { put(UnsafeRawBufferPointer($0)) }
    }

    /// Ends the line: appends `\n` and writes out everything staged.
    func endLine() {
        if !overflow.isEmpty {
            overflow.append(UInt8(ascii: "\n"))
            writeStaged()
            return
        }
        if used == storage.count { writeStaged() }
        storage[used] = UInt8(ascii: "\n")
        used += 1
        writeStaged()
    }

    /// Writes out everything staged, masked (see `SecretRedactor`).
    func writeStaged() {
        if !overflow.isEmpty {
            overflow.append(contentsOf: UnsafeRawBufferPointer(rebasing: storage[0..<used]))
            used = 0
            let line = overflow
            overflow = []
            _ = line.withUnsafeBytes { FileDescriptorWriter.writeMasked(fd, $0, masking: redactor) }
            return
        }
        guard used > 0 else { return }
        FileDescriptorWriter.writeMasked(fd, UnsafeRawBufferPointer(rebasing: storage[0..<used]), masking: redactor)
        used = 0
    }

    /// Writes `bytes` with the secrets `redactor` holds masked.
    @discardableResult
    static func writeMasked(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, masking redactor: SecretRedactor) -> Bool {
        if let masked = redactor.redacted(bytes) {
            return masked.withUnsafeBytes { writeAll(fd, $0) }
        }
        return writeAll(fd, bytes)
    }

    /// Writes all of `bytes`: retries after a signal, waits for room on a non-blocking
    /// descriptor. Returns false if the descriptor refused (closed pipe, full disk):
    /// output has nowhere to go then, and the run goes on; a loss on stdout is noted
    /// (`StandardOutputLoss`), for the CLI to report when the command ends.
    @discardableResult
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard var p = bytes.baseAddress else { return true }
        var left = bytes.count
        while left > 0 {
            let n = write(fd, p, left)
            if n > 0 {
                p += n
                left -= n
            } else if n < 0 && errno == EINTR {
                continue
            } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&pfd, 1, -1)
            } else {
                StandardOutputLoss.note(fd: fd, errorNumber: n < 0 ? errno : EIO, bytes: left)
                return false
            }
        }
        return true
    }

    /// Writes `bytes` to `fd` from a helper thread and waits at most `seconds` for it:
    /// for a process about to exit, whose descriptor may be a pipe nobody reads. Returns
    /// whether the write finished in time; if not, the helper stays blocked until the
    /// process exits.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8], within seconds: Double, masking redactor: SecretRedactor) -> Bool {
        guard !bytes.isEmpty else { return true }
        let done = DispatchSemaphore(value: 0)
        let writer = Thread {
            bytes.withUnsafeBytes { _ = writeMasked(fd, $0, masking: redactor) }
            done.signal()
        }
        writer.start()
        return done.wait(timeout: .now() + seconds) == .success
    }
}
