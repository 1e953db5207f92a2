import Foundation
import SystemText
import ScriptHost
import RunJournal

/// Which part of a long list `runs show` prints: its writes (default: the first
/// `defaultWrites`) or, with `--output`, its kept output (default: all of it, which
/// `RunOutputBound` keeps to about 1 MiB). `--limit N` and `--offset K` choose a page,
/// `--tail N` the last N; a page that leaves items out says how to see them.
struct RunsShowPage: Equatable {
    /// Writes `runs show` prints when no page is asked for.
    static let defaultWrites = 100

    var limit: Int?
    var offset = 0
    var tail: Int?

    static let specs = [
        OptionSpec(name: "limit", valueName: "n", help: "Show at most N writes (default 100) or output lines (default all)."),
        OptionSpec(name: "offset", valueName: "k", help: "Skip the first K writes or output lines."),
        OptionSpec(name: "tail", valueName: "n", help: "Show the last N writes or output lines."),
    ]

    init(limit: Int? = nil, offset: Int = 0, tail: Int? = nil) {
        self.limit = limit
        self.offset = offset
        self.tail = tail
    }

    init(_ arguments: ParsedArguments) throws {
        func count(_ name: String, allowZero: Bool) throws -> Int? {
            guard let text = arguments.value(name) else { return nil }
            guard let n = Int(text), allowZero ? n >= 0 : n > 0 else {
                throw UsageError("--\(name) takes a \(allowZero ? "number, 0 or more" : "positive number"), not '\(text)'")
            }
            return n
        }
        limit = try count("limit", allowZero: false)
        offset = try count("offset", allowZero: true) ?? 0
        tail = try count("tail", allowZero: false)
        if tail != nil && (limit != nil || arguments.value("offset") != nil) {
            throw UsageError("--tail shows the last N; it cannot be combined with --limit or --offset")
        }
    }

    /// The range of `total` items to show, when nothing is asked `defaultLimit` (nil: all).
    func range(of total: Int, defaultLimit: Int?) -> Range<Int> {
        if let tail { return max(0, total - tail)..<total }
        let start = min(offset, total)
        let count = limit ?? defaultLimit ?? total
        return start..<min(total, start + count)
    }

    /// The line saying which part of `total` `shown` is and how to see the rest, or
    /// nil when everything was shown.
    static func note(_ what: String, shown: Range<Int>, of total: Int, runID: String, flag: String) -> String? {
        guard shown.count < total else { return nil }
        let part = shown.isEmpty ? "none" : "\(shown.lowerBound + 1)–\(shown.upperBound)"
        var more: [String] = []
        more.append(shown.upperBound < total ? "--offset \(shown.upperBound)" : "--offset K")
        more.append("--tail N")
        more.append("--limit N")
        return "\(what) \(part) of \(total) shown; see more with hubscript runs show \(runID)\(flag) \(more.joined(separator: ", "))\n"
    }
}

extension RunsShowCommand {
    /// `runs show ID --output`: the run's kept output, a page of it.
    func showOutput(_ journal: Journal, _ run: RunRecord) throws -> Int32 {
        let totals = try journal.outputTotals(runID: run.id)
        let range = page.range(of: totals.lines, defaultLimit: nil)
        let lines = page.tail != nil
            ? try journal.outputTail(runID: run.id, count: range.count)
            : try journal.output(runID: run.id, offset: range.lowerBound, limit: range.count)
        if json {
            let output = ConsoleOutput(json: true, timestamps: false)
            for line in lines {
                output.event("output", [
                    "run_id": .string(run.id), "attempt": .integer(Int64(line.attempt)), "seq": .integer(Int64(line.sequence)),
                    "kind": .string(line.kindName), "time": .string(Self.timestamp(line.time)), "text": .string(line.text),
                ])
            }
            output.event("output_page", [
                "run_id": .string(run.id), "offset": .integer(Int64(range.lowerBound)), "count": .integer(Int64(lines.count)),
                "total": .integer(Int64(totals.lines)),
            ])
            return ExitCode.success
        }
        guard totals.lines > 0 else {
            Console.out("run \(TerminalText.field(run.id)) kept no output\(run.status == .running ? " yet" : "")\n")
            return ExitCode.success
        }
        Console.out(Self.outputText(lines))
        if let note = RunsShowPage.note("output lines", shown: range, of: totals.lines, runID: run.id, flag: " --output") {
            Console.out(note)
        }
        return ExitCode.success
    }

    /// Kept output for people: a heading per attempt, then each line after its time
    /// (UTC); log lines as the console shows them (`[info] …`). Everything a recipe said
    /// is escaped (`TerminalText`): a kept line cannot forge a heading or hide one.
    static func outputText(_ lines: [RunOutputLine]) -> String {
        var text = ""
        var attempt: Int?
        for line in lines {
            if line.attempt != attempt {
                attempt = line.attempt
                text += "attempt \(line.attempt) (\(day(line.time)) UTC)\n"
            }
            let body: String
            switch line.kind {
            case .print?, .error?, .warning?: body = TerminalText.text(line.text)
            case .logDebug?: body = "[debug] " + TerminalText.line(line.text)
            case .logInfo?: body = "[info] " + TerminalText.line(line.text)
            case .logWarn?: body = "[warn] " + TerminalText.line(line.text)
            case .logError?: body = "[error] " + TerminalText.line(line.text)
            case .summary?, .truncated?: body = TerminalText.line(line.text)
            case nil: body = "[\(TerminalText.field(line.kindName))] " + TerminalText.text(line.text)
            }
            let stamp = "  \(clock(line.time))  "
            let indent = String(repeating: " ", count: stamp.count)
            text += stamp + body.replacingOccurrences(of: "\n", with: "\n" + indent) + "\n"
        }
        return text
    }

    /// `2026-12-02T08:01:46.123Z`.
    static func timestamp(_ date: Date) -> String {
        let ms = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        let second = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
        let utc = UTCFields(secondsSince1970: second).description
        return String(utc.dropLast()) + "." + DecimalText.padded(Int(ms - second * 1000), 3) + "Z"
    }

    /// `2026-12-02`.
    static func day(_ date: Date) -> String { String(timestamp(date).prefix(10)) }

    /// `08:01:46.123`.
    static func clock(_ date: Date) -> String { String(timestamp(date).dropFirst(11).prefix(12)) }
}
