import Foundation

/// Marks a stored sandbox as being served by `hubscript sandbox serve`, so that
/// `sandbox reset` can warn that the server keeps its old data.
///
/// The mark is a shared `flock` on `<sandbox file>.serve-lock`, held for the server's
/// whole life; the file holds a one-line description (`pid 123, http://127.0.0.1:8470`)
/// of the server that took it last. The kernel drops the lock when the process ends,
/// however it ends, so a killed server never counts as running; a stale file alone
/// means nothing. Shared, so two servers of one state directory do not exclude each
/// other; `holder` probes with an exclusive lock it gives back at once.
public final class SandboxServeLock: @unchecked Sendable {
    private let descriptor: Int32

    private init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { close(descriptor) }   // closing the last descriptor releases the lock

    /// The lock file of the sandbox stored in `sandboxFile`.
    public static func lockFile(for sandboxFile: URL) -> URL {
        URL(fileURLWithPath: sandboxFile.path + ".serve-lock")
    }

    /// Takes the shared lock for a server of `sandboxFile` and records `description`.
    /// Keep the result alive for as long as the server runs.
    public static func acquire(sandboxFile: URL, description: String) throws -> SandboxServeLock {
        let path = lockFile(for: sandboxFile).path
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw ServeLockError("cannot open \(path): \(String(cString: strerror(errno)))") }
        guard flock(fd, LOCK_SH | LOCK_NB) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw ServeLockError("cannot lock \(path): \(reason)")
        }
        let line = Array((description + "\n").utf8)
        if ftruncate(fd, 0) == 0 { _ = line.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) } }
        return SandboxServeLock(descriptor: fd)
    }

    /// The description of a live server of `sandboxFile` (`""` if it recorded none), or
    /// nil when no process holds the lock.
    public static func holder(sandboxFile: URL) -> String? {
        let path = lockFile(for: sandboxFile).path
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        if flock(fd, LOCK_EX | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return nil
        }
        guard errno == EWOULDBLOCK else { return nil }
        var buffer = [UInt8](repeating: 0, count: 256)
        let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        let text = String(decoding: buffer.prefix(max(n, 0)), as: UTF8.self)
        return String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
    }
}

/// The serve lock could not be taken (the server runs without it).
public struct ServeLockError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
