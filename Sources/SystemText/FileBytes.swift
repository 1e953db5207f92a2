import Foundation   // POSIXError only

/// Reads a whole file with `open` and `read`.
///
/// `Data(contentsOf:)` goes through `URL`: its first use in a process costs about a
/// tenth of a millisecond (run-time lookups of the generic code behind `URL.path`),
/// paid by every run that reads its recipe that way (scripts/bench-runtime).
public enum FileBytes {
    /// The bytes of the file at `path`, read to its end (a pipe or a device too; a FIFO
    /// nothing writes to throws `NoWriter` instead of waiting).
    /// Throws the `POSIXError` of the call that failed (`EISDIR` for a folder);
    /// `FileErrorText.reason(_:path:)` turns it into words.
    public static func read(_ path: String) throws -> [UInt8] {
        try read(path, atMost: nil)
    }

    /// `read(_:)` that stops once the file turns out longer than `limit` bytes and
    /// throws `TooLong` (so a device or a pipe that never ends, `/dev/zero`, fails at
    /// once instead of filling the memory). nil reads to the end whatever the length.
    public static func read(_ path: String, atMost limit: Int?) throws -> [UInt8] {
        let (fd, probed) = try openForReading(path)
        defer { close(fd) }
        var status = stat()
        var capacity = 64 * 1024
        if fstat(fd, &status) == 0, status.st_size > 0 { capacity = Int(status.st_size) + 1 }
        // A regular file longer than the limit (a sparse one of terabytes) is refused unread.
        if let limit, status.st_mode & S_IFMT == S_IFREG, status.st_size > limit { throw TooLong(limit: limit) }
        if let limit { capacity = min(capacity, limit + 1) }
        if let limit, probed.count > limit { throw TooLong(limit: limit) }
        var bytes = probed
        var chunk = [UInt8](repeating: 0, count: capacity)
        while true {
            let count = chunk.withUnsafeMutableBytes { unistdRead(fd, $0.baseAddress, $0.count) }
            if count == 0 { return bytes }
            if count < 0 {
                if errno == EINTR { continue }
                throw currentError()
            }
            if let limit, bytes.count + count > limit { throw TooLong(limit: limit) }
            bytes.append(contentsOf: chunk[..<count])
        }
    }

    /// `open(path, O_RDONLY)` that never waits for a writer. A FIFO or pipe is opened
    /// without blocking and probed once: what a writer already sent comes back in
    /// `probed` (read it before the descriptor); if nothing is writing to it (a FIFO
    /// nobody opened for writing, which `open` would wait on forever), `NoWriter` is
    /// thrown. Otherwise the descriptor blocks as usual, so `<(command)` is read to its
    /// end. Other failures throw the `POSIXError` of the call that failed.
    public static func openForReading(_ path: String) throws -> (fd: Int32, probed: [UInt8]) {
        var fd: Int32
        repeat { fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC) } while fd < 0 && errno == EINTR
        guard fd >= 0 else { throw currentError() }
        var status = stat()
        var probed: [UInt8] = []
        if fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFIFO {
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            var count: Int
            repeat { count = chunk.withUnsafeMutableBytes { unistdRead(fd, $0.baseAddress, $0.count) } } while count < 0 && errno == EINTR
            if count == 0 {
                close(fd)
                throw NoWriter()
            }
            if count > 0 { probed = Array(chunk[..<count]) }
        }
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
        return (fd, probed)
    }

    /// A FIFO or pipe that nothing is writing to: reading it would wait forever.
    public struct NoWriter: Error, Sendable, Equatable, CustomStringConvertible {
        public init() {}
        public var description: String { "it is a FIFO (named pipe) that nothing is writing to" }
    }

    /// The file is longer than the `limit` it was read with.
    public struct TooLong: Error, Sendable, Equatable {
        public let limit: Int
    }

    private static func currentError() -> POSIXError {
        POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }
}

private func unistdRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(fd, buffer, count)
}
