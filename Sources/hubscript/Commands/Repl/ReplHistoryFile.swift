import Foundation
import ScriptHost
import SystemText

/// The repl's history on disk (`repl/history` in the state folder): one line per entry,
/// the file 0600 whatever its mode was, never followed through a symlink, secrets the
/// process knows masked, at most `LineEditor.historyLimit` lines kept.
enum ReplHistoryFile {
    static func load(_ path: String) -> [String] {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var data = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 65536)
        while data.count < 16 << 20 {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            data += chunk[0..<n]
        }
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
        let kept = Array(lines.suffix(LineEditor.historyLimit))
        if lines.count > LineEditor.historyLimit { rewrite(path, kept) }
        return kept
    }

    static func append(_ line: String, to path: String) {
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
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
