import Foundation
import SystemText
import ScriptHost
import RunJournal
import Runs

/// Prints how a run ended: a message on stderr for people, a `summary` event with
/// `--json`. Returns the exit code.
///
/// Everything a recipe controls (error messages, tracebacks, warnings, export names)
/// reaches people through `TerminalText`, so it cannot forge or hide a line such as
/// the closing `done:`; `--json` events carry the exact text.
struct RunReporter: Sendable {
    let output: ConsoleOutput
    let json: Bool
    /// Options the resume command printed at the start must repeat (`CommonOptions.Values.repeatedOptions`).
    var repeatedOptions: String = ""
    /// Whether people get the closing `done:`/`stopped:` line (`eval` leaves it out
    /// unless --verbose: its values are what it says).
    var closingLine: Bool = true

    /// One piece of a closing report: a `--json` event, or text for people on stderr
    /// (already escaped).
    enum Item {
        case event(String, [String: ScriptValue])
        case stderr(String)
    }

    /// Reports a command that ended before its recipe ran (`runID`: the run id if known).
    /// Under `--json` the `error` event and `summary` go to stdout and the error also to
    /// stderr as one line, as every other refusal before a run (`JSONEvents.refuse`, usage
    /// errors): a person watching a `--json` command still sees why it stopped.
    func reportSetupFailure(_ error: Error, exitCode: Int32? = nil, runID: String? = nil) -> Int32 {
        let failure = (error as? ScriptFailure) ?? ScriptFailure(kind: .load, message: "\(error)")
        let code = exitCode ?? failure.exitCode
        var items = self.items(for: failure)
        if json {
            items.append(.stderr("\(Styled.error) \(TerminalText.line(failure.message))\n"))
            items.append(.event("summary", JSONEvents.summary(status: "failed", exitCode: code, runID: runID)))
        }
        emit(items)
        return code
    }

    /// An apply of a plan applied in full before: says so; exit code 0.
    func reportAlreadyApplied(_ done: PlanAlreadyApplied) -> Int32 {
        if json {
            output.event("warning", ["message": .string(done.description)])
            var summary = JSONEvents.summary(status: "ok", exitCode: ExitCode.success, runID: done.runID)
            summary["already_applied"] = .bool(true)
            output.event("summary", summary)
        } else {
            output.writeStderr(TerminalText.text(done.description) + "\n")
        }
        return ExitCode.success
    }

    /// A resume of a run that already succeeded: says so; exit code 0.
    func reportNothingToResume(_ done: NothingToResume) -> Int32 {
        if json {
            output.event("warning", ["message": .string(done.description)])
            var summary = JSONEvents.summary(status: "ok", exitCode: ExitCode.success, runID: done.run.id)
            summary["nothing_to_resume"] = .bool(true)
            output.event("summary", summary)
        } else {
            output.writeStderr(TerminalText.text(done.description) + "\n")
        }
        return ExitCode.success
    }

    /// The run id and, for people, the command that resumes it.
    func reportStart(_ run: RunRecord) {
        if json { output.event("start", JSONEvents.start(run, repeatedOptions: repeatedOptions)) }
        else { output.writeStderr(JSONEvents.startLine(run, repeatedOptions: repeatedOptions)) }
    }

    /// Reports a run against a Hub: the error if any, warnings, and the closing summary
    /// (stderr for people; a `summary` event with --json).
    func finish(_ outcome: HubRunOutcome) -> Int32 {
        emit(items(for: outcome))
        return outcome.exitCode
    }

    /// The watchdog's report, for a process about to exit: the same items as `finish`,
    /// written with bounded waits (`ConsoleOutput.writeBeforeExit`), since the stuck Lua
    /// thread may hold the output's lock or be blocked writing to stdout. With `--json`,
    /// if stdout cannot take the events, the error goes to stderr as text instead.
    func finishBeforeExit(_ outcome: HubRunOutcome) {
        var stdoutText = "", stderrText = ""
        for item in items(for: outcome) {
            switch item {
            case .event(let type, let fields): stdoutText += output.eventLine(type, fields) + "\n"
            case .stderr(let text): stderrText += text
            }
        }
        let fallback = json ? (outcome.failure.map(Self.text(for:)) ?? "") : ""
        output.writeBeforeExit(stdoutText: stdoutText, stderrText: stderrText, stderrIfStdoutFails: fallback)
    }

    func items(for outcome: HubRunOutcome) -> [Item] {
        var items = outcome.failure.map(self.items(for:)) ?? []
        for warning in outcome.warnings {
            items.append(json ? .event("warning", ["message": .string(warning)])
                              : .stderr("\(Styled.warning) \(TerminalText.line(warning))\n"))
        }
        let c = outcome.counts
        let seconds = outcome.report?.durationSeconds ?? 0
        let status = outcome.failure == nil ? "ok" : "failed"
        if json {
            var summary = JSONEvents.summary(status: status, exitCode: outcome.exitCode, runID: outcome.runID, counts: c)
            summary["duration_ms"] = .integer(Int64(seconds * 1000))
            summary["reads_replayed"] = .integer(Int64(c.readsReplayed))
            summary["memory_peak_bytes"] = .integer(Int64(outcome.report?.memoryPeakBytes ?? 0))
            summary["exports"] = .array(outcome.exports.map {
                var fields: [String: ScriptValue] = ["name": .string($0.name), "rows": .integer(Int64($0.rows)), "path": .string($0.path)]
                if let id = $0.objectID { fields["object_id"] = .string(id) }
                if $0.incomplete { fields["incomplete"] = .bool(true) }
                return .object(fields)
            })
            summary["output_folder"] = .string(outcome.outputFolder.path)
            items.append(.event("summary", summary))
        } else {
            // People always get the summary, also for a run that made no Hub call
            // (`done: run … — 0 reads, 0 writes in 0.01 s`): it names the run.
            let f = TerminalText.field
            let stored = outcome.exports.filter(\.inVault)
            let files = outcome.exports.filter { !$0.inVault && !$0.incomplete }
            let unfinished = outcome.exports.filter(\.incomplete)
            if !files.isEmpty {
                let list = files.map { "\(f($0.name)) (\($0.rows) rows)" }.joined(separator: ", ")
                items.append(.stderr("exported \(list) to \(f(outcome.outputFolder.path))\n"))
            }
            if !unfinished.isEmpty {
                let list = unfinished.map { "\(f($0.name)) (\($0.rows) rows)" }.joined(separator: ", ")
                items.append(.stderr("kept incomplete: \(list) in \(f(outcome.outputFolder.path)) (the run stopped before finishing them; a resume writes them whole)\n"))
            }
            if !stored.isEmpty {
                // vault:audit/ada.jsonl (obj_…) — a plan's are not stored.
                let list = stored.map { "\(f($0.name)) (\($0.objectID ?? "not stored: plan")) (\($0.rows) rows)" }.joined(separator: ", ")
                items.append(.stderr("exported \(list) to the vault\n"))
            }
            var parts = ["\(c.reads) reads", "\(c.writes) writes"]
            if c.readsReplayed > 0 { parts.insert("\(c.readsReplayed) reads replayed", at: 1) }
            if c.replayed > 0 { parts.append("\(c.replayed) replayed") }
            if c.planned > 0 { parts.append("\(c.planned) planned") }
            if c.failed > 0 { parts.append("\(c.failed) failed") }
            if closingLine { items.append(.stderr("\(status == "ok" ? "done" : "stopped"): run \(f(outcome.runID)) — \(parts.joined(separator: ", ")) in \(DecimalText.fixed(seconds, 2)) s\n")) }
        }
        return items
    }

    func items(for failure: ScriptFailure) -> [Item] {
        guard json else { return [.stderr(Self.text(for: failure))] }
        var fields: [String: ScriptValue] = ["kind": .string(Self.kindName(failure.kind)), "message": .string(failure.message)]
        if let structured = failure.structured { fields["error"] = structured }
        if !failure.traceback.isEmpty { fields["traceback"] = .string(failure.traceback) }
        if let location = failure.location { fields["location"] = .string(location) }
        return [.event("error", fields)]
    }

    func report(failure: ScriptFailure) {
        emit(items(for: failure))
    }

    private func emit(_ items: [Item]) {
        for item in items {
            switch item {
            case .event(let type, let fields): output.event(type, fields)
            case .stderr(let text): output.writeStderr(text)
            }
        }
    }

    /// `error: message` and the traceback, for people. A runtime error's message is the
    /// recipe's (or the Hub's) text, so it stays on one line (`\n` shows as `\n`); the
    /// host's and limits' messages keep their line breaks; tracebacks keep theirs and
    /// their tabs. Every other control character is escaped.
    static func text(for failure: ScriptFailure) -> String {
        let keep: TerminalText.Keep = failure.kind == .runtime ? .line : .text
        let location = failure.location.map { TerminalText.field($0) + ": " } ?? ""
        var text = "\(Styled.error) \(location)\(TerminalText.escaped(failure.message, keeping: keep))\n"
        if !failure.traceback.isEmpty { text += TerminalText.text(failure.traceback) + "\n" }
        return text
    }

    static func kindName(_ kind: ScriptFailure.Kind) -> String {
        switch kind {
        case .load: "load"
        case .runtime: "runtime"
        case .host: "host"
        case .limit(let l): "limit.\(l.rawValue)"
        }
    }
}
