import Foundation
import HubClient

/// The per-run-id lock of a SQLite journal (`FileRunLocks`): one process at a time
/// runs a given run id on this host. (A PostgreSQL journal's runs are locked by the
/// server instead: `PostgresRunLocks`.)
///
/// Contracts:
/// - The lock is an OS lock (`flock`, exclusive) on `locks/<sha256 of the id>.lock` in
///   the state directory. The kernel drops it when the holding process ends in any way
///   (`kill -9` included), so a run can never be left locked by a dead process.
/// - `acquire` never waits for another run: a held lock is refused at once with
///   `RunLock.Busy` (exit code 2 in the CLI). It retries for up to `probeGrace` (50 ms) only to
///   ride over `isHeld` probes and `sweep`s, which hold the lock for microseconds.
/// - A journal row that says `running` while its lock is free is a run that died
///   mid-way: `effectiveStatus` reports it as `interrupted`.
/// - The holder writes its pid into the file (for the refusal message only).
/// - Lock files do not pile up. A file is removed only by a process that holds its lock
///   (`release`, and `sweep` for the files of runs that died), and whoever locks a file
///   checks afterwards that the path still names that file (`fstat` of the descriptor
///   against `stat` of the path), opening it again if not. So a process that opened
///   the file just before it was removed never believes it holds the run: it holds a
///   lock on a file nobody else can open any more, notices, and starts again.
public final class RunLock: HeldRunLock, @unchecked Sendable {
    /// Another process (on this host, or on another sharing a PostgreSQL journal) holds
    /// the run id.
    public struct Busy: Error, Sendable, CustomStringConvertible {
        public let runID: String
        public let pid: Int32?
        /// The holder's host, when the lock is a PostgreSQL journal's.
        public let host: String?

        public init(runID: String, pid: Int32?, host: String? = nil) {
            self.runID = runID
            self.pid = pid
            self.host = host
        }

        public var description: String {
            let holder = (pid.map { "process \($0)" } ?? "another process") + (host.map { " on \($0)" } ?? "")
            return "run \(runID) is already running in \(holder); wait for it to end (hubscript runs list shows it), or stop that process and then resume with hubscript runs resume \(runID)"
        }
    }

    private let fd: Int32
    private let path: String
    private let folder: String
    public let runID: String

    private init(fd: Int32, path: String, folder: String, runID: String) {
        self.fd = fd
        self.path = path
        self.folder = folder
        self.runID = runID
    }

    deinit { release() }

    private var released = false
    /// Releases the lock and removes its file (also done when the object goes away; the
    /// kernel drops the lock, not the file, when the process ends otherwise), then
    /// sweeps the files of runs that died.
    public func release() {
        guard !released else { return }
        released = true
        if Self.isCurrent(fd, path: path) { unlink(path) }   // still holding the lock
        flock(fd, LOCK_UN)
        close(fd)
        Self.sweep(folder)
    }

    static let probeGrace: TimeInterval = 0.05

    /// The lock file of `runID` in `state` (its folder created if missing).
    static func file(_ runID: String, state: StateDirectory) throws -> URL {
        URL(fileURLWithPath: try filePath(runID, state: state))
    }

    /// `file`'s path (built as a string: see `StateDirectory.path`).
    static func filePath(_ runID: String, state: StateDirectory) throws -> String {
        filePath(runID, folder: try state.folderPath("locks"))
    }

    /// The lock file of `runID` in the locks folder `folder`.
    private static func filePath(_ runID: String, folder: String) -> String {
        // String(prefix), not a Substring appended: that goes through the generic append,
        // whose first call resolves associated types at run time, on every start.
        folder + "/" + String(Digest.sha256Hex(runID).prefix(32)) + ".lock"
    }

    /// Takes the lock of `runID`, or throws `Busy` if another process holds it.
    public static func acquire(_ runID: String, state: StateDirectory) throws -> RunLock {
        let folder = try state.folderPath("locks")
        let path = filePath(runID, folder: folder)
        let deadline = Date().addingTimeInterval(probeGrace)
        // Each round but the last lost a race with a release or a sweep that removed the
        // file it had opened; a handful is already unlikely.
        for _ in 0..<100 {
            // O_NOFOLLOW: a link planted at the lock's path is refused, never written through.
            let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard fd >= 0 else {
                throw HubConfigError("cannot open the run lock \(path): \(String(cString: strerror(errno))) (set --state-dir to a writable folder)")
            }
            while flock(fd, LOCK_EX | LOCK_NB) != 0 {
                let failure = errno
                guard failure == EWOULDBLOCK || failure == EINTR else {
                    close(fd)
                    throw HubConfigError("cannot lock \(path): \(String(cString: strerror(failure)))")
                }
                if Date() >= deadline {
                    let pid = holderPID(fd)
                    close(fd)
                    throw Busy(runID: runID, pid: pid)
                }
                usleep(10_000)
            }
            guard isCurrent(fd, path: path) else {   // removed (or replaced) before we locked it
                close(fd)
                continue
            }
            // Written in place, and cut only if a dead holder's longer text is left: on
            // ext4, cutting a file to 0 bytes makes its close (or here, removal) flush
            // it to disk first, half a millisecond of every run.
            let text = "\(getpid())\n"
            _ = text.withCString { pwrite(fd, $0, strlen($0), 0) }
            var written = stat()
            if fstat(fd, &written) == 0, Int(written.st_size) > text.utf8.count { _ = ftruncate(fd, off_t(text.utf8.count)) }
            return RunLock(fd: fd, path: path, folder: folder, runID: runID)
        }
        throw HubConfigError("cannot lock \(path): it was removed and made again 100 times in a row")
    }

    /// Whether a live process holds the lock of `runID` (a shared probe, never kept).
    public static func isHeld(_ runID: String, state: StateDirectory) -> Bool {
        guard let path = try? filePath(runID, state: state) else { return false }
        for _ in 0..<100 {
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { return false }   // no lock file: no process holds the run
            defer { close(fd) }
            guard flock(fd, LOCK_SH | LOCK_NB) == 0 else { return errno == EWOULDBLOCK }
            let current = isCurrent(fd, path: path)
            flock(fd, LOCK_UN)
            if current { return false }
            // The file was removed after we opened it: look at the one there now.
        }
        return false
    }

    /// Removes the lock files in `folder` that no process holds (those of runs killed or
    /// crashed: the kernel dropped their locks, not their files). Each is removed only
    /// while this process holds its lock, and only if the path still names it.
    /// (`opendir`/`readdir`, not FileManager: this runs at the end of every run, and
    /// FileManager's listing costs far more than the listing itself.)
    static func sweep(_ folderPath: String) {
        guard let directory = opendir(folderPath) else { return }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasSuffix(".lock") { names.append(name) }
        }
        closedir(directory)
        for name in names {
            let path = folderPath + "/" + name
            let fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
            guard fd >= 0 else { continue }
            if flock(fd, LOCK_EX | LOCK_NB) == 0 {
                if isCurrent(fd, path: path) { unlink(path) }
                flock(fd, LOCK_UN)
            }
            close(fd)
        }
    }

    /// Whether `path` still names the file open as `fd` (same device and inode).
    static func isCurrent(_ fd: Int32, path: String) -> Bool {
        var opened = stat(), named = stat()
        guard fstat(fd, &opened) == 0, stat(path, &named) == 0 else { return false }
        return opened.st_dev == named.st_dev && opened.st_ino == named.st_ino
    }

    private static func holderPID(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 16)
        let n = pread(fd, &buffer, 15, 0)
        guard n > 0 else { return nil }
        return Int32(String(decoding: buffer[0..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
