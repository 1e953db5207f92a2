import Foundation
import SystemText
import ScriptHost
import RunJournal

/// A run's output as it goes to the console (`inner`) and, kept with the run, to the
/// journal (`Journal+Output`): every print and log line the console shows, masked as
/// the console masks it, then — when the attempt ends — its warnings, error and summary
/// (`close`). Machine events (`--json`'s `write`, `export`, …) go to the console only:
/// the journal keeps writes and exports in their own tables.
///
/// Contracts:
/// - Lines are kept in the order they were said, within `RunOutputBound` for the whole
///   run (a resume goes on from `RunOutputTotals`); past it, lines are counted, not kept,
///   and `close` adds one `truncated` line saying how much was left out. A line that
///   crosses the bound keeps its beginning (cut on a character boundary), and nothing
///   after it is kept.
/// - Written in batches, never one transaction per line: a batch is committed once it
///   holds `batchLines` lines or `batchBytes` bytes, at the first line said
///   `batchSeconds` after the last commit, and at `close`. A process killed with
///   `kill -9` keeps a prefix of what it said (all but the uncommitted batch).
/// - The journal failing to take a batch never stops the run: the batch is dropped (and
///   counted as not kept); the console says so once.
/// - Thread-safe (the watchdog may write from another thread).
public final class JournalledOutput: ScriptOutput, @unchecked Sendable {
    /// A batch is committed once it holds this many lines…
    public static let batchLines = 256
    /// …or this many bytes…
    public static let batchBytes = 64 << 10
    /// …or at the first line said this long (seconds) after the last commit.
    public static let batchSeconds = 1.0

    public let inner: any ScriptOutput
    let journal: Journal
    let masking: SecretRedactor
    let runID: String
    let attempt: Int
    /// Log lines below this level are not kept (the console's level, or info if lower).
    let keptLevel: LogLevel

    private let lock = NSLock()
    private var batch: [RunOutputLine] = []
    private var batchByteCount = 0
    private var committedAt = MonotonicTime.seconds()
    private var nextSequence: Int
    private var keptLines: Int
    private var keptBytes: Int
    private var notKeptLines = 0
    private var notKeptBytes = 0
    private var closed = false
    private var failureShown = false

    /// `totals`: what the run's earlier attempts kept (zeros for a new run).
    /// `masking`: what masks the kept text (the process's redactor, as for the journal's
    /// other rows: several runs of one process share the journal).
    public init(wrapping inner: any ScriptOutput, journal: Journal, runID: String, attempt: Int,
                totals: RunOutputTotals = RunOutputTotals(), masking: SecretRedactor) {
        self.masking = masking
        self.inner = inner
        self.journal = journal
        self.runID = runID
        self.attempt = attempt
        keptLevel = min((inner as? ConsoleOutput)?.minimumLevel ?? .info, .info)
        nextSequence = totals.lastSequence + 1
        keptLines = totals.recipeLines
        keptBytes = totals.recipeBytes
    }

    // MARK: ScriptOutput

    public func printLine(_ text: String) {
        inner.printLine(text)
        var text = text
        text.withUTF8 { keep(.print, UnsafeRawBufferPointer($0)) }
    }

    public func printLine(bytes: UnsafeRawBufferPointer) {
        inner.printLine(bytes: bytes)
        keep(.print, bytes)
    }

    public func log(_ level: LogLevel, _ message: String, fields: [String: ScriptValue]) {
        inner.log(level, message, fields: fields)
        guard level >= keptLevel else { return }
        var line = JournalledOutput.logText(message, fields: fields)
        line.withUTF8 { keep(JournalledOutput.kind(of: level), UnsafeRawBufferPointer($0)) }
    }

    public func event(_ type: String, _ fields: [String: ScriptValue]) {
        inner.event(type, fields)
    }

    public func flush() {
        inner.flush()
    }

    // MARK: Keeping

    /// Keeps `bytes` (masked first, so a cut never leaves part of a secret) as a line of
    /// `kind`, within the run's bound.
    private func keep(_ kind: RunOutputKind, _ bytes: UnsafeRawBufferPointer) {
        // Past the bound a line is only counted (as said): not masked, not copied.
        let counted: Bool = lock.withLock {
            guard !closed else { return true }
            guard keptLines >= RunOutputBound.lines || (keptBytes >= RunOutputBound.bytes && !bytes.isEmpty) else { return false }
            notKeptLines += 1
            notKeptBytes += bytes.count
            return true
        }
        if counted { return }
        let now = Date()
        let masked = masking.redacted(bytes)
        let due: [RunOutputLine]? = lock.withLock {
            guard !closed else { return nil }
            let length = masked?.count ?? bytes.count
            let room = RunOutputBound.bytes - keptBytes
            guard keptLines < RunOutputBound.lines, room > 0 || length == 0 else {
                notKeptLines += 1
                notKeptBytes += length
                return nil
            }
            let text = masked.map { masked in masked.withUnsafeBytes { JournalledOutput.prefix($0, room) } }
                ?? JournalledOutput.prefix(bytes, room)
            let keptLength = text.utf8.count
            keptLines += 1
            keptBytes += keptLength
            if keptLength < length {
                // A cut line ends what is kept: no crumbs of later lines after it.
                notKeptBytes += length - keptLength
                keptBytes = RunOutputBound.bytes
            }
            return append(RunOutputLine(attempt: attempt, sequence: takeSequence(), kind: kind, time: now, text: text))
        }
        if let due { commit(due) }
    }

    /// Adds `line` to the batch (under `lock`); returns the batch if it is due.
    private func append(_ line: RunOutputLine) -> [RunOutputLine]? {
        batch.append(line)
        batchByteCount += line.text.utf8.count
        let now = MonotonicTime.seconds()
        guard batch.count >= Self.batchLines || batchByteCount >= Self.batchBytes
                || now - committedAt >= Self.batchSeconds else { return nil }
        return takeBatch(at: now)
    }

    private func takeBatch(at now: Double = MonotonicTime.seconds()) -> [RunOutputLine] {
        let taken = batch
        batch = []
        batchByteCount = 0
        committedAt = now
        return taken
    }

    private func takeSequence() -> Int {
        defer { nextSequence += 1 }
        return nextSequence
    }

    /// Commits `lines` (outside `lock`: the journal may wait for another writer).
    private func commit(_ lines: [RunOutputLine]) {
        guard !lines.isEmpty else { return }
        do { try journal.appendOutput(runID: runID, lines, masking: masking) } catch {
            let show: Bool = lock.withLock {
                notKeptLines += lines.count
                defer { failureShown = true }
                return !failureShown
            }
            if show {
                inner.log(.warn, "the run's output could not be kept in the journal (\(error)); it is shown here only",
                          fields: [:])
            }
        }
    }

    // MARK: Closing

    /// Ends the attempt's output: the `truncated` line if anything was not kept, then
    /// `closing` (warnings, the error, the summary: each cut to
    /// `RunOutputBound.closingLineBytes`), with what is still batched: committed now, or
    /// with the journal's next commit if `withNextCommit` (`Journal.stageOutput`: the
    /// run's `finishRun` commits them, with no commit of their own). Lines said
    /// afterwards are not kept.
    public func close(_ closing: [(kind: RunOutputKind, text: String)], withNextCommit: Bool = false) {
        let now = Date()
        let lines: [RunOutputLine] = lock.withLock {
            guard !closed else { return [] }
            closed = true
            var lines = takeBatch()
            if notKeptLines > 0 || notKeptBytes > 0 {
                lines.append(RunOutputLine(attempt: attempt, sequence: takeSequence(), kind: .truncated, time: now, text: """
                    output truncated: \(notKeptLines) more lines (\(notKeptBytes) bytes) not kept; the journal keeps \
                    \(RunOutputBound.lines) lines or \(RunOutputBound.bytes) bytes of a run's output
                    """))
            }
            for (kind, text) in closing {
                var text = masking.redact(text)
                if text.utf8.count > RunOutputBound.closingLineBytes {
                    text = text.withUTF8 { JournalledOutput.prefix(UnsafeRawBufferPointer($0), RunOutputBound.closingLineBytes) }
                        + " … (cut)"
                }
                lines.append(RunOutputLine(attempt: attempt, sequence: takeSequence(), kind: kind, time: now, text: text))
            }
            return lines
        }
        if withNextCommit { journal.stageOutput(runID: runID, lines, masking: masking) } else { commit(lines) }
    }

    /// `close`, for a process about to exit (the watchdog's): waits at most `seconds`
    /// for the journal, since the stuck thread may hold it.
    public func close(_ closing: [(kind: RunOutputKind, text: String)], within seconds: Double) {
        let done = DispatchSemaphore(value: 0)
        let closer = Thread { [self] in
            close(closing)
            done.signal()
        }
        closer.start()
        _ = done.wait(timeout: .now() + seconds)
    }

    // MARK: Text

    static func kind(of level: LogLevel) -> RunOutputKind {
        switch level {
        case .debug: .logDebug
        case .info: .logInfo
        case .warn: .logWarn
        case .error: .logError
        }
    }

    /// A log line as kept: the message, then ` key=value` for each field in key order
    /// (a string as it is, quoted if it holds a space; anything else as JSON), masked.
    static func logText(_ message: String, fields: [String: ScriptValue]) -> String {
        var line = message
        for key in fields.keys.sorted() {
            let value: String
            switch fields[key]!.showingHandles {
            case .string(let s): value = s.contains(" ") ? "\"\(s)\"" : s
            case let other: value = (try? JSONCodec.encode(other)) ?? "?"
            }
            line += " \(key)=\(value)"
        }
        return line
    }

    /// The first `count` bytes of `bytes` as text, cut back to a character boundary
    /// (ill-formed UTF-8 reads as U+FFFD).
    /// The text is at most `count` bytes long, even where U+FFFD (3 bytes) stands for a
    /// single ill-formed byte.
    static func prefix(_ bytes: UnsafeRawBufferPointer, _ count: Int) -> String {
        let count = max(0, count)
        var text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[0..<cut(bytes, at: count)]), as: UTF8.self)
        if text.utf8.count > count {
            // Ill-formed bytes grew into U+FFFD: cut the well-formed text again.
            text = text.withUTF8 { utf8 in
                let raw = UnsafeRawBufferPointer(utf8)
                return String(decoding: UnsafeRawBufferPointer(rebasing: raw[0..<cut(raw, at: count)]), as: UTF8.self)
            }
        }
        return text
    }

    /// `count`, or less so that it does not fall inside a UTF-8 sequence of `bytes`.
    private static func cut(_ bytes: UnsafeRawBufferPointer, at count: Int) -> Int {
        guard count < bytes.count else { return bytes.count }
        var end = count
        // Back off continuation bytes (10xxxxxx) so the cut falls before a character.
        while end > 0 && bytes[end] & 0xC0 == 0x80 { end -= 1 }
        return end
    }
}
