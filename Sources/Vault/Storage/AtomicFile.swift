import CVault
import Foundation

/// A file written whole or not at all: bytes go to a temporary file in the target's
/// folder, which is synced, renamed over the target, and the folder synced. A crash at
/// any point leaves the old target or the new one, never a mix.
///
/// Two kinds of temporary file:
/// - named (`.NAME.tmp-<random>`, `O_CREAT|O_EXCL`, mode 0600): for the vault's own
///   files, whose leftovers after a crash are ciphertext and are removed under the
///   vault's lock;
/// - anonymous (Linux `O_TMPFILE`, linked to a name only when complete): for plaintext
///   written out of the vault, so a crash leaves no partial plaintext anywhere. Where
///   `O_TMPFILE` is not available it falls back to a named one.
final class AtomicFile {
    let folder: String
    private(set) var fd: Int32
    /// The temporary name; nil while the file is anonymous.
    private var tempPath: String?
    private var done = false
    /// Bytes written, and how many of them the kernel was asked to start writing out.
    private var written: Int64 = 0
    private var flushed: Int64 = 0
    /// Past this many unflushed bytes, writeback starts (so `commit`'s fsync is short).
    static let writebackStep: Int64 = 4 << 20
    private let checkpoint: @Sendable (String) -> Void
    private let label: String

    /// A temporary file in `folder`, named after `baseName`; `label` prefixes the
    /// checkpoints (`index.temp-created`, …).
    init(folder: String, baseName: String, anonymous: Bool, label: String, checkpoint: @escaping @Sendable (String) -> Void) throws {
        self.folder = folder
        self.label = label
        self.checkpoint = checkpoint
        if anonymous, let tmpfile = Self.tmpfileFlag, case .success(let fd) = FileIO.open(folder, tmpfile | O_WRONLY) {
            self.fd = fd
            tempPath = nil
        } else {
            let path = folder + "/." + baseName + ".tmp-" + FileIO.randomSuffix()
            fd = try FileIO.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW).orThrow(.ioError) {
                "cannot create a temporary file in \(folder): \($0)"
            }
            tempPath = path
        }
        checkpoint("\(label).temp-created")
    }

    deinit { discard() }

    /// Linux's `O_TMPFILE` (`__O_TMPFILE | O_DIRECTORY`), when `/proc/self/fd` can link it.
    private static let tmpfileFlag: Int32? = {
        #if os(Linux)
        return access("/proc/self/fd", X_OK) == 0 ? 0o20_000_000 | O_DIRECTORY : nil
        #else
        return nil
        #endif
    }()

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        try FileIO.writeAll(fd, bytes).orThrow(.ioError) { "cannot write in \(folder): \($0)" }
        written += Int64(bytes.count)
        if written - flushed >= Self.writebackStep {
            hs_start_writeback(fd, flushed, written - flushed)
            flushed = written
        }
    }

    func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    /// Takes an exclusive `flock` on the temporary file: a cleaner that can take it
    /// knows the writer is gone.
    func lockExclusive() {
        _ = flock(fd, LOCK_EX | LOCK_NB)
    }

    /// Syncs the file, puts it at `target` (replacing what is there), syncs the folder.
    func commit(as target: String) throws {
        precondition(!done)
        try check(fsync(fd) == 0, "cannot sync a temporary file in \(folder)")
        checkpoint("\(label).temp-synced")
        if tempPath == nil {
            let path = folder + "/." + URL(fileURLWithPath: target).lastPathComponent + ".tmp-" + FileIO.randomSuffix()
            try check(linkat(AT_FDCWD, "/proc/self/fd/\(fd)", AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0,
                      "cannot name a temporary file in \(folder)")
            tempPath = path
        }
        try check(rename(tempPath!, target) == 0, "cannot rename a temporary file over \(target)")
        tempPath = nil
        done = true
        close(fd)
        fd = -1
        checkpoint("\(label).renamed")
        try FileIO.syncFolder(folder).orThrow(.ioError) { "cannot sync the folder \(folder): \($0)" }
        checkpoint("\(label).folder-synced")
    }

    /// Removes the temporary file (nothing happens to the target). Idempotent.
    func discard() {
        guard !done else { return }
        done = true
        if let tempPath { unlink(tempPath) }
        if fd >= 0 { close(fd) }
        fd = -1
    }

    private func check(_ ok: Bool, _ message: String) throws {
        guard ok else { throw VaultError(.ioError, "\(message): \(FileIO.reason(errno))") }
    }

    /// Writes `bytes` to `target` atomically.
    static func replace(_ target: String, with bytes: [UInt8], label: String, checkpoint: @escaping @Sendable (String) -> Void) throws {
        let url = URL(fileURLWithPath: target)
        let file = try AtomicFile(folder: url.deletingLastPathComponent().path, baseName: url.lastPathComponent,
                                  anonymous: false, label: label, checkpoint: checkpoint)
        defer { file.discard() }
        let half = bytes.count / 2
        try bytes.withUnsafeBytes { all in
            try file.write(UnsafeRawBufferPointer(rebasing: all[0..<half]))
            checkpoint("\(label).temp-partial")
            try file.write(UnsafeRawBufferPointer(rebasing: all[half...]))
        }
        checkpoint("\(label).temp-written")
        try file.commit(as: target)
    }
}
