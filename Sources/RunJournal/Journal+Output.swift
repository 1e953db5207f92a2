import Foundation
import SQLiteKit
import SystemText

/// What a line of a run's kept output is.
public enum RunOutputKind: String, Sendable, CaseIterable {
    /// A recipe's `print`.
    case print
    /// A recipe's (or the host's) `log.*` line, by level.
    case logDebug = "log.debug", logInfo = "log.info", logWarn = "log.warn", logError = "log.error"
    /// A warning the run ended with (an apply that did not make every planned write, …).
    case warning
    /// The error the run stopped on: `location: message`, then the traceback.
    case error
    /// How the run ended: status, exit code, counts, duration, exports.
    case summary
    /// How much of the run's output was not kept (`RunOutputBound`).
    case truncated

    /// Whether the line is something the recipe said (counted against `RunOutputBound`),
    /// not one of the few lines the host closes an attempt with (always kept, each cut
    /// to `RunOutputBound.closingLineBytes`).
    public var isRecipeOutput: Bool {
        switch self {
        case .print, .logDebug, .logInfo, .logWarn, .logError: true
        case .warning, .error, .summary, .truncated: false
        }
    }
}

/// One line of a run's kept output.
public struct RunOutputLine: Sendable, Equatable {
    /// The run's attempt that said it (1 for the first pass; each `runs resume`, apply
    /// of a plan or re-fire adds one: `RunRecord.attempts`).
    public let attempt: Int
    /// Its place in the run's output, across every attempt (1, 2, …).
    public let sequence: Int
    /// What it is; a kind this version does not know reads as nil (`kindName` has it).
    public var kind: RunOutputKind? { RunOutputKind(rawValue: kindName) }
    /// The kind as stored.
    public let kindName: String
    /// When it was said.
    public let time: Date
    /// The text, secrets masked, without a trailing newline (it may hold line breaks).
    public let text: String

    public init(attempt: Int, sequence: Int, kind: RunOutputKind, time: Date, text: String) {
        self.init(attempt: attempt, sequence: sequence, kindName: kind.rawValue, time: time, text: text)
    }

    init(attempt: Int, sequence: Int, kindName: String, time: Date, text: String) {
        self.attempt = attempt
        self.sequence = sequence
        self.kindName = kindName
        self.time = time
        self.text = text
    }
}

/// How much of a run's output the journal keeps: a run says what it likes on the
/// console, but its record is bounded so that a recipe printing in a loop cannot fill
/// the journal. Every attempt of a run together keeps at most `lines` lines and `bytes`
/// bytes of what the recipe said (prints and log lines); past that, the attempt ends its
/// output with one `truncated` line saying how much was not kept. The lines the host
/// closes each attempt with — its warnings, error and summary — are always kept, each cut
/// to `closingLineBytes`: the end of a run is what its reader looks for first.
public enum RunOutputBound {
    /// Lines of recipe output kept per run (every attempt together).
    public static let lines = 10_000
    /// Bytes (UTF-8) of recipe output kept per run (every attempt together): 1 MiB.
    public static let bytes = 1 << 20
    /// The most a closing line (warning, error with its traceback, summary) keeps: 16 KiB.
    public static let closingLineBytes = 16 << 10
}

/// What a run's kept output holds so far: where a resume goes on from.
public struct RunOutputTotals: Sendable, Equatable {
    /// Lines of recipe output kept (`RunOutputKind.isRecipeOutput`), every attempt.
    public var recipeLines = 0
    /// Their bytes.
    public var recipeBytes = 0
    /// Every line kept, closing lines included.
    public var lines = 0
    /// The last line's `sequence` (0: none).
    public var lastSequence = 0

    public init(recipeLines: Int = 0, recipeBytes: Int = 0, lines: Int = 0, lastSequence: Int = 0) {
        self.recipeLines = recipeLines
        self.recipeBytes = recipeBytes
        self.lines = lines
        self.lastSequence = lastSequence
    }
}

extension Journal {
    /// Adds `lines` to run `runID`'s output in one transaction (committed when this
    /// returns). Text is masked once more by `masking` and a NUL byte, which neither
    /// backend keeps, is stored as U+FFFD. A line whose sequence the run already holds is
    /// left as it is (a retried batch does not repeat lines).
    public func appendOutput(runID: String, _ lines: [RunOutputLine], masking: SecretRedactor) throws {
        guard !lines.isEmpty else { return }
        let masked = Journal.masked(lines, masking)
        try transaction { db in try Journal.insertOutput(db, runID: runID, masked) }
    }

    /// Adds `lines` to run `runID`'s output with the journal's next commit (the run's
    /// `finishRun`, what an attempt's closing lines wait for: no commit of their own), or
    /// at `flush()`. As `appendOutput` otherwise; lines staged stay staged if that
    /// commit fails.
    public func stageOutput(runID: String, _ lines: [RunOutputLine], masking: SecretRedactor) {
        guard !lines.isEmpty else { return }
        let masked = Journal.masked(lines, masking)
        locked { _ in stagedOutput.append((runID, masked)) }
    }

    /// `lines` with their text masked by `masking`.
    static func masked(_ lines: [RunOutputLine], _ masking: SecretRedactor) -> [RunOutputLine] {
        guard masking.isActive else { return lines }
        return lines.map { line in
            RunOutputLine(attempt: line.attempt, sequence: line.sequence, kindName: line.kindName, time: line.time,
                          text: masking.redact(line.text))
        }
    }

    /// Rows per INSERT statement: a few statements per batch (one round trip each on
    /// PostgreSQL), each text cached (a full chunk's is always the same).
    static let outputRowsPerStatement = 32

    static func insertOutput(_ db: any JournalDatabase, runID: String, _ lines: [RunOutputLine]) throws {
        var start = 0
        while start < lines.count {
            let chunk = lines[start..<min(lines.count, start + outputRowsPerStatement)]
            var values: [String] = []
            var args: [SQLValue] = []
            for line in chunk {
                let n = args.count
                values.append("(?\(n + 1), ?\(n + 2), ?\(n + 3), ?\(n + 4), ?\(n + 5), ?\(n + 6), ?\(n + 7))")
                let text = storable(line.text)
                args += [.text(runID), .opt(line.sequence), .opt(line.attempt), .text(line.kindName),
                         .opt(ms(line.time)), .text(text), .opt(text.utf8.count)]
            }
            try db.run("""
                INSERT INTO run_output (run_id, seq, attempt, kind, at, text, bytes)
                VALUES \(values.joined(separator: ", "))
                ON CONFLICT (run_id, seq) DO NOTHING
                """, args)
            start += chunk.count
        }
    }

    /// `text` with each NUL byte as U+FFFD: both backends read text as C strings.
    static func storable(_ text: String) -> String {
        text.utf8.contains(0) ? text.replacingOccurrences(of: "\0", with: "\u{FFFD}") : text
    }

    /// What run `runID`'s output holds (zeros for a run without any).
    public func outputTotals(runID: String) throws -> RunOutputTotals {
        let recipeKinds = RunOutputKind.allCases.filter(\.isRecipeOutput).map { "'\($0.rawValue)'" }.joined(separator: ", ")
        return try reading { db in
            try db.first("""
                SELECT coalesce(sum(CASE WHEN kind IN (\(recipeKinds)) THEN 1 ELSE 0 END), 0),
                       coalesce(sum(CASE WHEN kind IN (\(recipeKinds)) THEN bytes ELSE 0 END), 0),
                       count(*), coalesce(max(seq), 0)
                FROM run_output WHERE run_id = ?1
                """, [.text(runID)]) {
                RunOutputTotals(recipeLines: $0.int(0), recipeBytes: $0.int(1), lines: $0.int(2), lastSequence: $0.int(3))
            } ?? RunOutputTotals()
        }
    }

    /// Lines of run `runID`'s output in order: `limit` of them (nil: all) after the
    /// first `offset`.
    public func output(runID: String, offset: Int = 0, limit: Int? = nil) throws -> [RunOutputLine] {
        try reading { db in
            try Journal.selectOutput(db, runID: runID,
                                     suffix: "ORDER BY seq LIMIT \(max(0, limit ?? Int(Int32.max))) OFFSET \(max(0, offset))")
        }
    }

    /// The last `count` lines of run `runID`'s output, in order.
    public func outputTail(runID: String, count: Int) throws -> [RunOutputLine] {
        try reading { db in
            try Journal.selectOutput(db, runID: runID, suffix: "ORDER BY seq DESC LIMIT \(max(0, count))").reversed()
        }
    }

    private static func selectOutput(_ db: any JournalDatabase, runID: String, suffix: String) throws -> [RunOutputLine] {
        var lines: [RunOutputLine] = []
        try db.query("SELECT attempt, seq, kind, at, text FROM run_output WHERE run_id = ?1 \(suffix)", [.text(runID)]) { row in
            lines.append(RunOutputLine(attempt: row.int(0), sequence: row.int(1), kindName: row.textOrNil(2) ?? "",
                                       time: date(row.intOrNil(3)) ?? Date(timeIntervalSince1970: 0),
                                       text: row.textOrNil(4) ?? ""))
        }
        return lines
    }
}
