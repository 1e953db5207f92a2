import Foundation

/// Writes lines to a file descriptor as they are made: a line is staged in a fixed
/// 64 KiB buffer and goes out with one `write(2)` when it ends, so nothing waits in
/// the process for a later flush (a consumer sees each line at once; after `kill -9`
/// every finished line is out). A piece larger than the buffer is written straight
/// from the caller's memory, never copied.
///
/// Not thread-safe: the owner serialises calls (ConsoleOutput holds its lock).
final class FileDescriptorWriter: ByteSink {
    let fd: Int32
    private let storage: UnsafeMutableRawBufferPointer
    private var used = 0

    init(fd: Int32, capacity: Int = 64 << 10) {
        self.fd = fd
        storage = .allocate(byteCount: capacity, alignment: 1)
    }

    deinit { storage.deallocate() }

    func put(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        if bytes.count > storage.count - used {
            writeStaged()
            if bytes.count >= storage.count {
                FileDescriptorWriter.writeAll(fd, bytes)
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
        if used == storage.count { writeStaged() }
        storage[used] = UInt8(ascii: "\n")
        used += 1
        writeStaged()
    }

    /// Writes out everything staged.
    func writeStaged() {
        guard used > 0 else { return }
        FileDescriptorWriter.writeAll(fd, UnsafeRawBufferPointer(rebasing: storage[0..<used]))
        used = 0
    }

    /// Writes all of `bytes`: retries after a signal, waits for room on a non-blocking
    /// descriptor. Returns false if the descriptor refused (closed pipe, full disk):
    /// output has nowhere to go then, and the run goes on.
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
                return false
            }
        }
        return true
    }

    /// Writes `bytes` to `fd` from a helper thread and waits at most `seconds` for it:
    /// for a process about to exit, whose descriptor may be a pipe nobody reads. Returns
    /// whether the write finished in time; if not, the helper stays blocked until the
    /// process exits.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8], within seconds: Double) -> Bool {
        guard !bytes.isEmpty else { return true }
        let done = DispatchSemaphore(value: 0)
        let writer = Thread {
            bytes.withUnsafeBytes { _ = writeAll(fd, $0) }
            done.signal()
        }
        writer.start()
        return done.wait(timeout: .now() + seconds) == .success
    }
}
