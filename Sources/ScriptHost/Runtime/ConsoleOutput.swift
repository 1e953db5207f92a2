import Foundation
import SystemText

/// The console: `print` to stdout, logs to stderr as `[level] message k=v`; with
/// `json`, every print, log line and event is one JSON object per line on stdout.
///
/// Every line is written as soon as it is made (one `write(2)` per line, nothing held
/// back for a later flush), so stdout and stderr keep their order, a consumer of
/// `--json` gets a live stream, and a process killed with `kill -9` has already
/// written every line it finished. Human output escapes control characters and bidi
/// controls (`TerminalText`): printed lines keep their line breaks and tabs, a log
/// line keeps only tabs. `--json` lines are exact JSON.
///
/// With a `terminalLine` (the progress line), every human line is written inside its
/// `clearing(_:)`: the progress line is erased first and drawn again after, so a printed
/// line and the progress line never share a line of the terminal. Printed lines are
/// cleared around only with `printsShareTerminalLine` (stdout is that terminal). `[warn]` and
/// `[error]` are painted (`TerminalStyle`) when stderr is coloured.
public final class ConsoleOutput: ScriptOutput, @unchecked Sendable {
    public let json: Bool
    public let minimumLevel: LogLevel
    /// Whether each `--json` line carries a `ts` field (`EventTimestamp`); the CLI's do.
    public let timestamps: Bool
    /// Held while a line is written, so lines from different threads never mix.
    private let lock = NSLock()
    private let stdout: FileDescriptorWriter
    private let stderr: FileDescriptorWriter
    /// What masks every line, log field and event (see `SecretRedactor`).
    public let redactor: SecretRedactor
    /// What else draws on the terminal (the progress line), cleared around each line.
    private let terminalLine: (any TerminalLineSharing)?
    /// Whether printed lines (stdout) are cleared around too: only when stdout is where
    /// the line is drawn (a print to a file or pipe cannot land on it).
    private let printsShareTerminalLine: Bool

    /// `stdoutFD`/`stderrFD` are the process's own by default (tests pass pipes), and so
    /// is `redactor`: the process's (`SecretRedactor.shared`), which every run of the
    /// process registers its secrets into, since the console is shared by them all.
    public init(json: Bool, minimumLevel: LogLevel = .info, stdoutFD: Int32 = 1, stderrFD: Int32 = 2,
                timestamps: Bool = false, redactor: SecretRedactor = .shared,
                terminalLine: (any TerminalLineSharing)? = nil, printsShareTerminalLine: Bool = true) {
        self.json = json
        self.terminalLine = terminalLine
        self.printsShareTerminalLine = printsShareTerminalLine
        self.timestamps = timestamps
        self.minimumLevel = minimumLevel
        self.redactor = redactor
        stdout = FileDescriptorWriter(fd: stdoutFD, redactor: redactor)
        stderr = FileDescriptorWriter(fd: stderrFD, redactor: redactor)
    }

    public func printLine(_ text: String) {
        var text = text
        text.withUTF8 { printLine(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Writes the Lua string's bytes straight to stdout: no copy of a clean string, and
    /// escapes or JSON streamed through a small buffer, so printing tens of MiB costs
    /// no extra memory of that size.
    public func printLine(bytes: UnsafeRawBufferPointer) {
        // Secrets are masked before escaping (an escaped secret would no longer match).
        if let masked = redactor.redacted(bytes) {
            return masked.withUnsafeBytes { printMasked($0) }
        }
        printMasked(bytes)
    }

    private func printMasked(_ bytes: UnsafeRawBufferPointer) {
        guard let terminalLine, printsShareTerminalLine else { return printLocked(bytes) }
        terminalLine.clearing { printLocked(bytes) }
    }

    private func printLocked(_ bytes: UnsafeRawBufferPointer) {
        lock.lock()
        defer { lock.unlock() }
        var sink = stdout
        if json {
            PrintEventJSON.write(bytes, timestamp: timestamps ? EventTimestamp.string() : nil, into: &sink)
        } else {
            TerminalText.escape(bytes, keeping: .text, into: &sink)
        }
        sink.endLine()
    }

    public func log(_ level: LogLevel, _ message: String, fields: [String: ScriptValue]) {
        guard level >= minimumLevel else { return }
        let message = redactor.redact(message)
        let fields = redactor.isActive ? fields.mapValues(redactor.redact) : fields
        if json {
            var all: [String: ScriptValue] = ["level": .string(level.rawValue), "message": .string(message)]
            if !fields.isEmpty { all["fields"] = .object(fields) }
            return event("log", all)
        }
        let tag = "[\(level.rawValue)]"
        var line = Self.paintedTag(tag, level) + " \(TerminalText.line(message))"
        for key in fields.keys.sorted() {
            line += " \(TerminalText.field(key))=\(TerminalText.field(Self.plain(fields[key]!)))"
        }
        writeStderr(line + "\n")
    }

    /// Machine events exist only in `--json` mode; otherwise this does nothing.
    public func event(_ type: String, _ fields: [String: ScriptValue]) {
        guard json else { return }
        let line = eventLine(type, fields)
        lock.lock()
        defer { lock.unlock() }
        stdout.put(line)
        stdout.endLine()
    }

    /// The NDJSON line of an event (without the newline), with `ts` if `timestamps`.
    public func eventLine(_ type: String, _ fields: [String: ScriptValue]) -> String {
        var all = fields.mapValues(\.showingHandles)
        if redactor.isActive { all = all.mapValues(redactor.redact) }
        if timestamps && all["ts"] == nil { all["ts"] = .string(EventTimestamp.string()) }
        return Self.eventLine(type, all)
    }

    /// The NDJSON line of an event (without the newline).
    public static func eventLine(_ type: String, _ fields: [String: ScriptValue]) -> String {
        var all = fields.mapValues(\.showingHandles)
        all["type"] = .string(type)
        return (try? JSONCodec.encode(.object(all))) ?? #"{"type":"error","message":"unencodable event"}"#
    }

    /// Writes `text` to stderr as it is: the caller has escaped what a recipe controls.
    public func writeStderr(_ text: String) {
        let text = redactor.redact(text)
        guard let terminalLine else { return writeStderrLocked(text) }
        terminalLine.clearing { writeStderrLocked(text) }
    }

    private func writeStderrLocked(_ text: String) {
        lock.lock()
        defer { lock.unlock() }
        stderr.put(text)
        stderr.writeStaged()
    }

    /// Nothing is ever held back: every line was written when it was made.
    public func flush() {}

    /// For a process about to `_exit` (the watchdog): writes `stdoutText` and
    /// `stderrText` without ever blocking for long, since the Lua thread may be stuck in
    /// a write to a pipe nobody reads, holding the output lock.
    ///
    /// Waits at most `lockWait` for the lock. `stdoutText` is written only under the lock
    /// (never into the middle of a line); if the lock could not be had, or stdout did not
    /// take the text within `writeWait`, `stderrIfStdoutFails` goes to stderr with
    /// `stderrText`. Each write gets at most `writeWait`; the caller exits afterwards
    /// whatever happened.
    public func writeBeforeExit(stdoutText: String, stderrText: String, stderrIfStdoutFails: String = "",
                                lockWait: Double = 0.25, writeWait: Double = 0.5) {
        let locked = lock.lock(before: Date(timeIntervalSinceNow: lockWait))
        defer { if locked { lock.unlock() } }
        var errText = stderrText
        if !stdoutText.isEmpty {
            let written = locked && FileDescriptorWriter.writeAll(stdout.fd, Array(stdoutText.utf8), within: writeWait,
                                                                    masking: redactor)
            if !written { errText += stderrIfStdoutFails }
        }
        if !errText.isEmpty {
            _ = FileDescriptorWriter.writeAll(stderr.fd, Array(errText.utf8), within: writeWait, masking: redactor)
        }
    }

    /// `[warn]` in yellow, `[error]` in red on a coloured stderr; other levels plain.
    static func paintedTag(_ tag: String, _ level: LogLevel) -> String {
        switch level {
        case .warn: TerminalStyle.paint(tag, .warning, on: .stderr)
        case .error: TerminalStyle.paint(tag, .error, on: .stderr)
        case .debug, .info: tag
        }
    }

    static func plain(_ value: ScriptValue) -> String {
        switch value {
        case .string(let s): return s.contains(" ") ? "\"\(s)\"" : s
        case .handle(let h): return h.description
        default: return (try? JSONCodec.encode(value.showingHandles)) ?? "?"
        }
    }
}
