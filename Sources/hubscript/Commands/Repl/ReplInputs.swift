import Foundation
import Synchronization

/// Lines from standard input as they come (a pipe, a file): no prompt, no editing,
/// so a script or a test can drive a session. A line is at most `maxLineBytes`: a longer
/// one is skipped with an error (it is never held whole outside the Lua state's limits).
final class PlainLineInput: ReplInput {
    static let maxLineBytes = 1 << 20
    private let reader: Mutex<LineReader>

    init(fd: Int32 = 0) { reader = Mutex(LineReader(fd: fd)) }

    func readLine(prompt: String, names: [String]) -> String? {
        reader.withLock { reader in
            while true {
                switch reader.next(maxBytes: Self.maxLineBytes) {
                case .line(let bytes): return String(decoding: bytes, as: UTF8.self)
                case .tooLong:
                    ReplSession.writeStderr("error: a line longer than \(Self.maxLineBytes >> 20) MiB was skipped\n")
                case .end: return nil
                }
            }
        }
    }
}

/// Reads lines from a file descriptor, without their `\n` (or `\r\n`). Each byte is
/// searched for a newline once, and a line is taken without moving the bytes after it,
/// so a line of a GiB (skipped) or a million short lines cost time in proportion.
struct LineReader: Sendable {
    enum Next: Equatable { case line([UInt8]), tooLong, end }

    let fd: Int32
    private var buffer: [UInt8] = []
    /// Where the bytes not yet returned start in `buffer`.
    private var head = 0
    /// How many bytes from `head` are known to hold no newline.
    private var scanned = 0
    private var ended = false

    init(fd: Int32) { self.fd = fd }

    mutating func next(maxBytes: Int) -> Next {
        var skipping = false
        while true {
            if let newline = buffer[(head + scanned)...].firstIndex(of: UInt8(ascii: "\n")) {
                var line = Array(buffer[head..<newline])
                head = newline + 1
                scanned = 0
                if skipping || line.count > maxBytes { return .tooLong }
                if line.last == UInt8(ascii: "\r") { line.removeLast() }
                return .line(line)
            }
            scanned = buffer.count - head
            if scanned > maxBytes {
                // Past the bound: drop what is held and the rest of the line.
                buffer.removeAll(keepingCapacity: true)
                head = 0
                scanned = 0
                skipping = true
            }
            if ended {
                if head == buffer.count { return skipping ? .tooLong : .end }
                let line = Array(buffer[head...])
                buffer.removeAll()
                head = 0
                scanned = 0
                return skipping ? .tooLong : .line(line)
            }
            if head > 0 {
                // The lines already returned go, once per read.
                buffer.removeSubrange(..<head)
                head = 0
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { ended = true; continue }
            buffer += chunk[0..<n]
        }
    }
}

/// The one chunk of `hubscript eval`, then the end of the input.
final class FixedInput: ReplInput {
    private let remaining: Mutex<[String]>

    init(_ lines: [String]) { remaining = Mutex(lines) }

    func readLine(prompt: String, names: [String]) -> String? {
        remaining.withLock { $0.isEmpty ? nil : $0.removeFirst() }
    }
}

/// The terminal's line editor, with the session's history file and completion.
final class EditedInput: ReplInput {
    private let editor: Mutex<LineEditor>

    init(_ editor: LineEditor) { self.editor = Mutex(editor) }

    var completes: Bool { true }

    func readLine(prompt: String, names: [String]) -> String? {
        editor.withLock { $0.readLine(prompt: prompt, sessionNames: names) }
    }
}
