import Foundation

/// The side record `<journal>-commits`: one line, `<journal id> <commits, 20 digits>`,
/// always the same length, rewritten in place (no rename, no truncation, no `fsync`).
/// Writers of one journal (threads, processes) take turns with `flock` on it, and a
/// count is written only if larger than the one there, so it never goes back.
final class JournalCommitLog: @unchecked Sendable {
    let path: String
    let journalID: String
    private let fd: Int32
    /// The id's bytes (32), and a buffer for a record read or made (`record`).
    private let idBytes: [UInt8]
    private let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 8)

    enum Contents: Equatable {
        case missing
        case damaged(String)
        case present(CommitCount)
    }

    /// Opens the record at `path` (made by `createIfMissing`); a link or anything but a
    /// regular file there is refused.
    init(path: String, journalID: String) throws {
        let fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            throw JournalError(.historyLost, """
                cannot open the journal's commit record \(path): \(reason); if it is not a file (a folder, a link), \
                move it aside and run again
                """)
        }
        var status = stat()
        guard fstat(fd, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw JournalError(.historyLost, "the journal's commit record \(path) is not a regular file; move it aside and run again")
        }
        self.fd = fd
        self.path = path
        self.journalID = journalID
        idBytes = Array(journalID.utf8.prefix(32)) + Array(repeating: UInt8(ascii: "0"), count: max(0, 32 - journalID.utf8.count))
    }

    deinit {
        close(fd)
        scratch.deallocate()
    }

    /// Puts a record holding `commits` at `path` unless one is there, whole: written
    /// (mode 0600) under a temporary name, then linked into place. A record made in
    /// place would be empty until written, and an empty record is a damaged one to
    /// every other process opening the journal meanwhile, or ever after a kill.
    static func createIfMissing(_ path: String, journalID: String, commits: Int) throws {
        let temporary = path + ".new-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { unlink(temporary) }
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            throw JournalError(.historyLost, "cannot create the journal's commit record \(path): \(String(cString: strerror(errno)))")
        }
        _ = fchmod(fd, 0o600)   // whatever the umask
        let digits = String(commits)
        let line = Array((journalID + " " + String(repeating: "0", count: max(0, 20 - digits.count)) + digits + "\n").utf8)
        let written = line.withUnsafeBytes { Foundation.write(fd, $0.baseAddress, $0.count) }
        let failure = written == line.count ? 0 : (written < 0 ? errno : ENOSPC)
        close(fd)
        guard failure == 0 else {
            throw JournalError(.historyLost,
                "cannot write the journal's commit record \(path): \(String(cString: strerror(failure))); free some space and run again")
        }
        if link(temporary, path) != 0 && errno != EEXIST {
            throw JournalError(.historyLost, "cannot create the journal's commit record \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// The record's line for `commits`.
    func line(_ commits: Int) -> [UInt8] {
        let digits = String(commits)
        return Array((journalID + " " + String(repeating: "0", count: max(0, 20 - digits.count)) + digits + "\n").utf8)
    }

    /// After a commit that brought the file's mark to `commits`: writes it unless the
    /// record already holds as much. Best effort: a record left behind only narrows
    /// what a later loss is measured against. No allocation: it runs after every
    /// commit (`flock`, `pread`, `pwrite`, `flock`; its cost: scripts/bench-journal).
    func record(_ commits: Int) {
        withLock {
            let count = pread(fd, scratch.baseAddress, scratch.count, 0)
            if count == Self.lineLength, let held = heldMark(), held >= commits { return }
            let digits = String(commits).utf8
            guard digits.count <= 20 else { return }
            scratch.copyBytes(from: idBytes)
            scratch[32] = UInt8(ascii: " ")
            for k in 33..<(53 - digits.count) { scratch[k] = UInt8(ascii: "0") }
            var k = 53 - digits.count
            for digit in digits { scratch[k] = digit; k += 1 }
            scratch[53] = UInt8(ascii: "\n")
            let written = pwrite(fd, scratch.baseAddress, Self.lineLength, 0)
            if written == Self.lineLength && count != Self.lineLength { _ = ftruncate(fd, off_t(Self.lineLength)) }
        }
    }

    /// The mark in `scratch` (just read), if it is this journal's well-formed record.
    private func heldMark() -> Int? {
        guard scratch[32] == UInt8(ascii: " "), scratch[53] == UInt8(ascii: "\n") else { return nil }
        for k in 0..<32 where scratch[k] != idBytes[k] { return nil }
        var mark = 0
        for k in 33..<53 {
            let byte = scratch[k]
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            mark = mark * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return mark
    }

    /// Every record's length: a 32-character id, a space, 20 digits, a line feed.
    static let lineLength = 54

    /// Sets the record to `commits`, even lower than it holds (accepting a loss).
    func overwrite(_ commits: Int) {
        withLock { write(line(commits), truncating: true) }
    }

    private func withLock(_ body: () -> Void) {
        while flock(fd, LOCK_EX) != 0 && errno == EINTR {}
        defer { flock(fd, LOCK_UN) }
        body()
    }

    /// Writes `bytes` at the start; `truncating`: cuts what was longer (a record of
    /// the same length is only overwritten: one system call fewer per commit).
    private func write(_ bytes: [UInt8], truncating: Bool) {
        let written = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        if written == bytes.count && truncating { _ = ftruncate(fd, off_t(bytes.count)) }
    }

    /// The record at `path`, read without following a link or blocking on a FIFO.
    static func read(_ path: String) -> Contents {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return errno == ENOENT ? .missing : .damaged(String(cString: strerror(errno))) }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return .damaged("not a regular file") }
        // Shared with other readers, not with a writer's `pwrite`: a read that raced one
        // could see half of the old mark and half of the new one.
        while flock(fd, LOCK_SH) != 0 && errno == EINTR {}
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = buffer.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress, $0.count) }
        guard count >= 0 else { return .damaged(String(cString: strerror(errno))) }
        return parse(Array(buffer[..<count]))
    }

    static func parse(_ bytes: [UInt8]) -> Contents {
        let text = String(decoding: bytes, as: UTF8.self)
        let fields = text.split(separator: " ", omittingEmptySubsequences: false)
        guard bytes.count == lineLength, text.hasSuffix("\n"), fields.count == 2, fields[0].count == 32,
              fields[0].allSatisfy({ $0.isHexDigit && !$0.isUppercase }),
              fields[1].dropLast().allSatisfy({ $0 >= "0" && $0 <= "9" }), let commits = Int(fields[1].dropLast()) else {
            return .damaged(bytes.isEmpty ? "empty" : "not a commit record")
        }
        return .present(CommitCount(journalID: String(fields[0]), commits: commits, path: nil))
    }
}
