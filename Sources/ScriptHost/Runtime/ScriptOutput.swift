import Foundation

public enum LogLevel: String, Sendable, CaseIterable, Comparable {
    case debug, info, warn, error

    var rank: Int { Self.allCases.firstIndex(of: self)! }
    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rank < b.rank }
}

/// Where a run's output goes. Implementations must be thread-safe: the watchdog may
/// write from another thread.
public protocol ScriptOutput: AnyObject, Sendable {
    /// A line from `print` (without the newline).
    func printLine(_ text: String)
    /// A line from `print` as the Lua string's bytes (UTF-8, possibly ill-formed),
    /// valid only during the call. The default decodes them (ill-formed sequences become
    /// U+FFFD) and calls `printLine(_:)`; an output that streams writes them as they are.
    func printLine(bytes: UnsafeRawBufferPointer)
    /// A `log.*` line.
    func log(_ level: LogLevel, _ message: String, fields: [String: ScriptValue])
    /// A machine-readable event (`--json` mode writes it as one NDJSON line).
    func event(_ type: String, _ fields: [String: ScriptValue])
    /// Writes out anything buffered.
    func flush()
}

extension ScriptOutput {
    public func printLine(bytes: UnsafeRawBufferPointer) {
        printLine(String(decoding: bytes, as: UTF8.self))
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
