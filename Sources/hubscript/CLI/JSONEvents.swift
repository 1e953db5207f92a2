import Foundation
import ScriptHost
import SystemText
import RunJournal
import Configuration

/// The `--json` contract (docs/json-events.md): one JSON object per line on stdout,
/// each with `type` and `ts`. `schemaVersion` is in the `start` and `summary` events;
/// it changes only when a field is removed or changes meaning (new fields and event
/// types do not change it).
enum JSONEvents {
    static let schemaVersion: Int64 = 1

    /// The counts every summary carries, zero when the run never started.
    static func counts(_ c: RunCounts) -> [String: ScriptValue] {
        ["reads": .integer(Int64(c.reads)), "writes": .integer(Int64(c.writes)), "replayed": .integer(Int64(c.replayed)),
         "planned": .integer(Int64(c.planned)), "failed": .integer(Int64(c.failed))]
    }

    /// The `summary` of a command that ended before (or without) running a recipe.
    static func summary(status: String, exitCode: Int32, runID: String?,
                        counts: RunCounts = RunCounts()) -> [String: ScriptValue] {
        var fields = Self.counts(counts)
        fields["status"] = .string(status)
        fields["exit_code"] = .integer(Int64(exitCode))
        fields["run_id"] = runID.map(ScriptValue.string) ?? .null
        fields["schema_version"] = .integer(schemaVersion)
        return fields
    }

    /// The `start` event: the first line of a run under `--json`. `resume` is the command
    /// that resumes it, with `repeatedOptions` (` --config …`) after the run id.
    static func start(_ run: RunRecord, repeatedOptions: String = "") -> [String: ScriptValue] {
        var fields: [String: ScriptValue] = [
            "run_id": .string(run.id), "mode": .string(run.mode.rawValue), "recipe": .string(run.recipePath),
            "attempt": .integer(Int64(run.attempts)), "schema_version": .integer(schemaVersion),
        ]
        if run.mode != .plan && !ReplDriver.isSession(recipePath: run.recipePath) { fields["resume"] = .string("hubscript runs resume " + ShellWord.quoted(run.id) + repeatedOptions) }
        return fields
    }

    /// The line for people on stderr when a run starts.
    static func startLine(_ run: RunRecord, repeatedOptions: String = "") -> String {
        let id = TerminalText.field(run.id)
        switch run.mode {
        case .plan: return "plan \(id) started\n"
        case .run, .apply:
            // A session's lines are not kept: there is nothing to resume it from.
            if ReplDriver.isSession(recipePath: run.recipePath) { return "run \(id) started\n" }
            let attempt = run.attempts > 1 ? " (attempt \(run.attempts))" : ""
            return "run \(id) started\(attempt); if it stops, resume it with: hubscript runs resume "
                + TerminalText.field(ShellWord.quoted(run.id) + repeatedOptions) + "\n"
        }
    }

    /// Under `--json` (anywhere in `args`), a usage error is also an `error` event (kind
    /// `usage`; `command`: the subcommand it is about, null when none was recognised) and
    /// a `summary` with exit code 2 on stdout; the text stays on stderr.
    static func usageError(_ message: String, command: String?, args: [String]) {
        guard args.contains("--json") else { return }
        let output = ConsoleOutput(json: true, timestamps: true)
        output.event("error", ["kind": "usage", "message": .string(message),
                               "command": command.map(ScriptValue.string) ?? .null])
        output.event("summary", summary(status: "failed", exitCode: ExitCode.usage, runID: nil))
    }

    /// The fields of an `error` event (kind `host`) for `error`: its message and, for
    /// library files that no longer match their pins, what changed (`LibraryPinError.jsonFields`:
    /// `code`, `lock`, `libraries`, `changes`).
    static func hostError(_ error: Error) -> [String: ScriptValue] {
        var fields: [String: ScriptValue] = ["kind": "host", "message": .string("\(error)")]
        if let pins = error as? LibraryPinError { fields.merge(pins.jsonFields) { $1 } }
        return fields
    }

    /// A command that stops before any run with `message` (exit code `exitCode`): the
    /// text on stderr and, under `json`, an `error` event (kind `host`) and a `summary`.
    static func refuse(_ message: String, json: Bool, runID: String? = nil, exitCode: Int32 = ExitCode.usage) -> Int32 {
        Console.err("\(Styled.error) \(TerminalText.text(message))\n")
        if json {
            let output = ConsoleOutput(json: true, timestamps: true)
            output.event("error", ["kind": "host", "message": .string(message)])
            output.event("summary", summary(status: "failed", exitCode: exitCode, runID: runID))
        }
        return exitCode
    }
}
