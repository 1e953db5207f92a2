import Foundation
import ScriptHost
import SystemText

/// The repl's history on disk (`repl/history` in the state folder): one line per entry,
/// the file 0600 whatever its mode was, never followed through a symlink, secrets the
/// process knows masked, at most `LineEditor.historyLimit` lines kept. Only a regular
/// file the user owns is read or written: a FIFO (which would block the prompt or hand
/// the lines to whoever reads it), a device or another user's file is left alone, and
/// the session runs without history.
enum ReplHistoryFile {
    /// Opens `path` without blocking and without following a symlink; nil unless it is
    /// a regular file owned by this user.
    private static func openOwnFile(_ path: String, _ flags: Int32) -> Int32? {
        let fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0o600)
        guard fd >= 0 else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == geteuid() else {
            close(fd)
            return nil
        }
        return fd
    }

    static func load(_ path: String) -> [String] {
        guard let fd = openOwnFile(path, O_RDONLY) else { return [] }
        defer { close(fd) }
        var data = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 65536)
        while data.count < 16 << 20 {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            data += chunk[0..<n]
        }
        // A line longer than the editor holds (the file edited by hand) is not recalled.
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
            .filter { $0.count <= LineEditState.maxCharacters }
        let kept = Array(lines.suffix(LineEditor.historyLimit))
        if lines.count > LineEditor.historyLimit { rewrite(path, kept) }
        return kept
    }

    static func append(_ line: String, to path: String) {
        guard let fd = openOwnFile(path, O_WRONLY | O_APPEND | O_CREAT) else { return }
        defer { close(fd) }
        _ = fchmod(fd, 0o600)
        write(fd, SecretRedactor.shared.redact(line) + "\n")
    }

    /// Replaces the file with `lines` (a temporary file renamed over it).
    private static func rewrite(_ path: String, _ lines: [String]) {
        let temporary = path + ".new"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        let ok = write(fd, lines.map { $0 + "\n" }.joined())
        close(fd)
        if ok { rename(temporary, path) } else { unlink(temporary) }
    }

    @discardableResult
    private static func write(_ fd: Int32, _ text: String) -> Bool {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Foundation.write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }
}
