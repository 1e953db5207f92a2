import Foundation   // POSIXError only

/// Reads a whole file with `open` and `read`.
///
/// `Data(contentsOf:)` goes through `URL`: its first use in a process costs about a
/// tenth of a millisecond (run-time lookups of the generic code behind `URL.path`),
/// paid by every run that reads its recipe that way (scripts/bench-runtime).
public enum FileBytes {
    /// The bytes of the file at `path`, read to its end (a pipe or a device too).
    /// Throws the `POSIXError` of the call that failed (`EISDIR` for a folder);
    /// `FileErrorText.reason(_:path:)` turns it into words.
    public static func read(_ path: String) throws -> [UInt8] {
        try read(path, atMost: nil)
    }

    /// `read(_:)` that stops once the file turns out longer than `limit` bytes and
    /// throws `TooLong` (so a device or a pipe that never ends, `/dev/zero`, fails at
    /// once instead of filling the memory). nil reads to the end whatever the length.
    public static func read(_ path: String, atMost limit: Int?) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw currentError() }
        defer { close(fd) }
        var status = stat()
        var capacity = 64 * 1024
        if fstat(fd, &status) == 0, status.st_size > 0 { capacity = Int(status.st_size) + 1 }
        if let limit { capacity = min(capacity, limit + 1) }
        var bytes: [UInt8] = []
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
