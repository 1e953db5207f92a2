import Foundation
import HubClient

/// The per-run-id lock: one process at a time runs a given run id.
///
/// Contracts:
/// - The lock is an OS lock (`flock`, exclusive) on `locks/<sha256 of the id>.lock` in
///   the state directory. The kernel drops it when the holding process ends in any way
///   (`kill -9` included), so a run can never be left locked by a dead process.
/// - `acquire` never waits for another run: a held lock is refused at once with
///   `RunLock.Busy` (exit code 2 in the CLI). It retries for up to `probeGrace` (50 ms) only to
///   ride over `isHeld` probes, which hold a shared lock for microseconds.
/// - A journal row that says `running` while its lock is free is a run that died
///   mid-way: `effectiveStatus` reports it as `interrupted`.
/// - The holder writes its pid into the file (for the refusal message only).
public final class RunLock: @unchecked Sendable {
    /// Another process holds the run id.
    public struct Busy: Error, Sendable, CustomStringConvertible {
        public let runID: String
        public let pid: Int32?
        public var description: String {
            let holder = pid.map { "process \($0)" } ?? "another process"
            return "run \(runID) is already running in \(holder); wait for it to end (hubscript runs list shows it), or stop that process and then resume with hubscript runs resume \(runID)"
        }
    }

    private let fd: Int32
    public let runID: String

    private init(fd: Int32, runID: String) {
        self.fd = fd
        self.runID = runID
    }

    deinit { release() }

    private var released = false
    /// Releases the lock (also done when the object goes away or the process ends).
    public func release() {
        guard !released else { return }
        released = true
        flock(fd, LOCK_UN)
        close(fd)
    }

    static let probeGrace: TimeInterval = 0.05

    /// The lock file of `runID` in `state` (its folder created if missing).
    static func file(_ runID: String, state: StateDirectory) throws -> URL {
        try state.folder("locks").appendingPathComponent(Digest.sha256Hex(runID).prefix(32) + ".lock")
    }

    /// Takes the lock of `runID`, or throws `Busy` if another process holds it.
    public static func acquire(_ runID: String, state: StateDirectory) throws -> RunLock {
        let path = try file(runID, state: state).path
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw HubConfigError("cannot open the run lock \(path): \(String(cString: strerror(errno))) (set --state-dir to a writable folder)")
        }
        let deadline = Date().addingTimeInterval(probeGrace)
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
        let text = "\(getpid())\n"
        _ = ftruncate(fd, 0)
        _ = text.withCString { pwrite(fd, $0, strlen($0), 0) }
        return RunLock(fd: fd, runID: runID)
    }

    /// Whether a live process holds the lock of `runID` (a shared probe, never kept).
    public static func isHeld(_ runID: String, state: StateDirectory) -> Bool {
        guard let path = try? file(runID, state: state).path else { return false }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }   // never locked on this machine
        defer { close(fd) }
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return false
        }
        return errno == EWOULDBLOCK
    }

    /// The status to show for a journal row: `interrupted` for a `running` row whose
    /// lock no process holds, the row's own status otherwise.
    public static func effectiveStatus(_ run: RunRecord, state: StateDirectory) -> String {
        if run.status == .running && !isHeld(run.id, state: state) { return "interrupted" }
        return run.status.rawValue
    }

    private static func holderPID(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 16)
        let n = pread(fd, &buffer, 15, 0)
        guard n > 0 else { return nil }
        return Int32(String(decoding: buffer[0..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
