import Foundation

/// Counts how often any process opens one file (Linux inotify, `IN_OPEN`): a test sees
/// how often a command reads its configuration without any hook in the product. Closes
/// are watched too: inotify merges an event into an identical one still unread, so two
/// opens count as two only with a close between them.
final class FileOpenCounter {
    private let fd: Int32

    /// Watches `path` from now on.
    init(_ path: String) throws {
        fd = inotify_init1(Int32(IN_NONBLOCK) | Int32(IN_CLOEXEC))
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        guard inotify_add_watch(fd, path, UInt32(IN_OPEN) | UInt32(IN_CLOSE_NOWRITE) | UInt32(IN_CLOSE_WRITE)) >= 0 else {
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
    }

    deinit { close(fd) }

    /// The opens of the file since the last call (or since the watch began).
    func opens() -> Int {
        var count = 0
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { return count }
            var offset = 0
            while offset < n {
                let event = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: inotify_event.self) }
                if event.mask & UInt32(IN_OPEN) != 0 { count += 1 }
                offset += MemoryLayout<inotify_event>.size + Int(event.len)
            }
        }
    }
}
