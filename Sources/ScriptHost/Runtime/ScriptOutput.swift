import Foundation
import Synchronization

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
public final class MemoryOutput: ScriptOutput, Sendable {
    private struct Collected {
        var lines: [String] = []
        var logs: [(level: LogLevel, message: String, fields: [String: ScriptValue])] = []
        var events: [(type: String, fields: [String: ScriptValue])] = []
    }

    private let collected = Mutex(Collected())

    public init() {}

    public var lines: [String] { collected.withLock { $0.lines } }
    public var logs: [(level: LogLevel, message: String, fields: [String: ScriptValue])] { collected.withLock { $0.logs } }
    public var events: [(type: String, fields: [String: ScriptValue])] { collected.withLock { $0.events } }

    public func printLine(_ text: String) { collected.withLock { $0.lines.append(text) } }
    public func log(_ level: LogLevel, _ message: String, fields: [String: ScriptValue]) {
        collected.withLock { $0.logs.append((level, message, fields)) }
    }
    public func event(_ type: String, _ fields: [String: ScriptValue]) {
        collected.withLock { $0.events.append((type, fields)) }
    }
    public func flush() {}
}

/// Something else drawing one line on the terminal, redrawn in place (the progress
/// line). A console line is written inside `clearing(_:)`, so the two never share a line.
public protocol TerminalLineSharing: AnyObject, Sendable {
    /// Erases the drawn line if one is shown, runs `write` (which writes whole lines),
    /// then draws the line again. `write` must not call back into the sharer.
    func clearing(_ write: () -> Void)
}
