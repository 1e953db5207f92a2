import Foundation

public enum LogLevel: String, Sendable, CaseIterable, Comparable {
    case debug, info, warn, error

    var rank: Int { Self.allCases.firstIndex(of: self)! }
    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rank < b.rank }
}

/// Where a run's output goes. Implementations must be thread-safe: the watchdog may
/// flush from another thread.
public protocol ScriptOutput: AnyObject, Sendable {
    /// A line from `print` (without the newline).
    func printLine(_ text: String)
    /// A `log.*` line.
    func log(_ level: LogLevel, _ message: String, fields: [String: ScriptValue])
    /// A machine-readable event (`--json` mode writes it as one NDJSON line).
    func event(_ type: String, _ fields: [String: ScriptValue])
    /// Writes out anything buffered.
    func flush()
}

/// The console: `print` to stdout, logs to stderr as `[level] message k=v`; with
/// `json`, every print, log line and event is one JSON object per line on stdout.
public final class ConsoleOutput: ScriptOutput, @unchecked Sendable {
    public let json: Bool
    public let minimumLevel: LogLevel
    private let lock = NSLock()
    private var buffer = Data()
    private let stdout = FileHandle.standardOutput
    private let stderr = FileHandle.standardError

    public init(json: Bool, minimumLevel: LogLevel = .info) {
        self.json = json
        self.minimumLevel = minimumLevel
    }

    public func printLine(_ text: String) {
        if json { return event("print", ["text": .string(text)]) }
        append(text + "\n")
    }

    public func log(_ level: LogLevel, _ message: String, fields: [String: ScriptValue]) {
        guard level >= minimumLevel else { return }
        if json {
            var all: [String: ScriptValue] = ["level": .string(level.rawValue), "message": .string(message)]
            if !fields.isEmpty { all["fields"] = .object(fields) }
            return event("log", all)
        }
        var line = "[\(level.rawValue)] \(message)"
        for key in fields.keys.sorted() {
            line += " \(key)=\(Self.plain(fields[key]!))"
        }
        writeStderr(line + "\n")
    }

    /// Machine events exist only in `--json` mode; otherwise this does nothing.
    public func event(_ type: String, _ fields: [String: ScriptValue]) {
        guard json else { return }
        var all = fields
        all["type"] = .string(type)
        let line = (try? JSONCodec.encode(.object(all))) ?? #"{"type":"error","message":"unencodable event"}"#
        append(line + "\n")
    }

    /// Writes a line to stderr after flushing stdout (keeps the two in order on a TTY).
    public func writeStderr(_ text: String) {
        lock.lock()
        defer { lock.unlock() }
        flushLocked()
        stderr.write(Data(text.utf8))
    }

    public func flush() {
        lock.lock()
        defer { lock.unlock() }
        flushLocked()
    }

    private func append(_ text: String) {
        lock.lock()
        defer { lock.unlock() }
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 32 << 10 { flushLocked() }
    }

    private func flushLocked() {
        guard !buffer.isEmpty else { return }
        stdout.write(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    static func plain(_ value: ScriptValue) -> String {
        switch value {
        case .string(let s): return s.contains(" ") ? "\"\(s)\"" : s
        default: return (try? JSONCodec.encode(value)) ?? "?"
        }
    }
}

/// Collects output in memory (tests, embedding).
public final class MemoryOutput: ScriptOutput, @unchecked Sendable {
    private let lock = NSLock()
    private var _lines: [String] = []
    private var _logs: [(LogLevel, String, [String: ScriptValue])] = []
    private var _events: [(String, [String: ScriptValue])] = []

    public init() {}

    public var lines: [String] { lock.withLock { _lines } }
    public var logs: [(level: LogLevel, message: String, fields: [String: ScriptValue])] {
        lock.withLock { _logs.map { (level: $0.0, message: $0.1, fields: $0.2) } }
    }
    public var events: [(type: String, fields: [String: ScriptValue])] {
        lock.withLock { _events.map { (type: $0.0, fields: $0.1) } }
    }

    public func printLine(_ text: String) { lock.withLock { _lines.append(text) } }
    public func log(_ level: LogLevel, _ message: String, fields: [String: ScriptValue]) {
        lock.withLock { _logs.append((level, message, fields)) }
    }
    public func event(_ type: String, _ fields: [String: ScriptValue]) {
        lock.withLock { _events.append((type, fields)) }
    }
    public func flush() {}
}
