import Foundation

/// Plain POSIX file calls with errors turned into `VaultError`s. No Foundation file
/// APIs: their buffering and error texts are not what the vault needs.
enum FileIO {
    /// `strerror` in lower case, e.g. "permission denied".
    static func reason(_ code: Int32) -> String {
        let text = String(cString: strerror(code))
        return text.prefix(1).lowercased() + text.dropFirst()
    }

    /// Opens `path` with `flags` (and O_CLOEXEC), retrying on EINTR; the errno on failure.
    static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o600) -> Result<Int32, Errno> {
        while true {
            let fd = Foundation.open(path, flags | O_CLOEXEC, mode)
            if fd >= 0 { return .success(fd) }
            if errno != EINTR { return .failure(Errno(errno)) }
        }
    }

    struct Errno: Error {
        let code: Int32
        init(_ code: Int32) { self.code = code }
        var text: String { FileIO.reason(code) }
    }

    /// Reads `fd` to its end, refusing more than `limit` bytes.
    static func readToEnd(_ fd: Int32, limit: Int) -> Result<[UInt8], Errno> {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return .failure(Errno(errno))
            }
            if n == 0 { return .success(bytes) }
            bytes.append(contentsOf: chunk[0..<n])
            if bytes.count > limit { return .failure(Errno(EFBIG)) }
        }
    }

    /// Fills `buffer` from `fd` until it is full or the file ends; returns the count.
    static func readFull(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Result<Int, Errno> {
        repeatUntilDone(buffer.count) { read(fd, buffer.baseAddress! + $0, buffer.count - $0) }
    }

    /// Writes all of `bytes`, retrying short writes and EINTR.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Result<Void, Errno> {
        repeatUntilDone(bytes.count) { write(fd, bytes.baseAddress! + $0, bytes.count - $0) }
            .flatMap { $0 == bytes.count ? .success(()) : .failure(Errno(EIO)) }
    }

    /// Calls `step(done)` (a read or write of what is left after `done` bytes) until
    /// `count` bytes are done or it returns 0, retrying EINTR; the bytes done.
    private static func repeatUntilDone(_ count: Int, _ step: (Int) -> Int) -> Result<Int, Errno> {
        var done = 0
        while done < count {
            let n = step(done)
            if n < 0 {
                if errno == EINTR { continue }
                return .failure(Errno(errno))
            }
            if n == 0 { break }
            done += n
        }
        return .success(done)
    }

    /// `fsync` of a folder, so a rename or unlink in it survives a crash.
    static func syncFolder(_ path: String) -> Result<Void, Errno> {
        switch open(path, O_RDONLY | O_DIRECTORY) {
        case .failure(let e): return .failure(e)
        case .success(let fd):
            defer { close(fd) }
            return fsync(fd) == 0 ? .success(()) : .failure(Errno(errno))
        }
    }

    /// What a file of mode `mode` is, for messages: "a FIFO", "a folder", …
    static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFREG: return "a regular file"
        case S_IFDIR: return "a folder"
        case S_IFIFO: return "a FIFO (named pipe)"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFSOCK: return "a socket"
        default: return "not a regular file"
        }
    }

    /// 16 random bytes as hex: the suffix of temporary names.
    static func randomSuffix() -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        bytes.withUnsafeMutableBytes { Sodium.randomBytes(into: $0) }
        return Sodium.hex(bytes)
    }
}

extension Result where Failure == FileIO.Errno {
    /// The value, or a `VaultError` of `code` whose message is `message(reason)`.
    func orThrow(_ code: VaultError.Code, _ message: (String) -> String) throws -> Success {
        switch self {
        case .success(let v): return v
        case .failure(let e): throw VaultError(code, message(e.text))
        }
    }
}
