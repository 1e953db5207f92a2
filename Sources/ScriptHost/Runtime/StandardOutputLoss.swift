import Foundation
import SystemText
import Synchronization

/// What the process could not write to its standard output: a full disk (`/dev/full`,
/// ENOSPC), a closed pipe (EPIPE: the CLI ignores SIGPIPE, so a reader that went away
/// is an error like any other), a descriptor closed at start (EBADF). Every writer of
/// stdout (`ConsoleOutput`'s lines and events, the CLI's own text) notes a write that
/// failed here; the CLI reports it when the command ends and exits non-zero
/// (docs/errors.md), so `hubscript run … --json > out.ndjson` never leaves a
/// truncated file behind a success.
///
/// Thread-safe. The first error is kept; the bytes lost add up.
public enum StandardOutputLoss {
    public struct Loss: Sendable, Equatable {
        /// The `errno` of the first write that failed.
        public let errorNumber: Int32
        /// Bytes that did not reach stdout, over every failed write.
        public var bytes: Int
    }

    private static let recorded = Mutex<Loss?>(nil)

    /// What was lost so far, if anything.
    public static var loss: Loss? { recorded.withLock { $0 } }

    /// Notes that `bytes` bytes could not be written to `fd` (only stdout, fd 1, counts).
    static func note(fd: Int32, errorNumber: Int32, bytes: Int) {
        guard fd == 1 else { return }
        recorded.withLock { recorded in
            if recorded == nil { recorded = Loss(errorNumber: errorNumber, bytes: 0) }
            recorded!.bytes += bytes
        }
    }

    /// Writes `text` to stdout, masked by the process's redactor (`SecretRedactor.shared`:
    /// stdout is the process's), noting a failure.
    public static func write(_ text: String) {
        var text = text
        text.withUTF8 { _ = FileDescriptorWriter.writeMasked(1, UnsafeRawBufferPointer($0), masking: .shared) }
    }

    /// The line the CLI prints on stderr when output was lost, or nil.
    public static func report() -> String? {
        guard let loss else { return nil }
        let reason = String(cString: strerror(loss.errorNumber))
        return "hubscript: output lost: \(loss.bytes) bytes could not be written to stdout (\(reason)); what the command "
            + "printed is incomplete. Send stdout to a file on a disk with room, or to a reader that stays until hubscript "
            + "ends (a run's outcome is kept in the journal: hubscript runs list)\n"
    }

    /// Forgets what was noted (tests).
    static func reset() { recorded.withLock { $0 = nil } }
}
