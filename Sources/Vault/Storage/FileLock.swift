import Foundation

/// An exclusive `flock` on a lock file, held until `release` or deinit (and dropped
/// by the kernel however the process ends).
final class FileLock {
    private var fd: Int32

    private init(fd: Int32) { self.fd = fd }

    /// Waits up to `timeout` seconds for the lock on `path` (created 0600 if missing).
    static func acquire(_ path: String, timeout: Double, busy: String) throws -> FileLock {
        let fd = try FileIO.open(path, O_RDWR | O_CREAT | O_NOFOLLOW).orThrow(.unreadable) { "cannot open the lock file \(path): \($0)" }
        let deadline = Date().addingTimeInterval(timeout)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            guard code == EWOULDBLOCK || code == EINTR else {
                close(fd)
                throw VaultError(.ioError, "cannot lock \(path): \(FileIO.reason(code))")
            }
            guard Date() < deadline else {
                close(fd)
                throw VaultError(.locked, busy)
            }
            usleep(5_000)
        }
        return FileLock(fd: fd)
    }

    func release() {
        guard fd >= 0 else { return }
        flock(fd, LOCK_UN)
        close(fd)
        fd = -1
    }

    deinit { release() }
}
