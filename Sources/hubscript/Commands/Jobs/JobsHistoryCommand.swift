import Foundation
import ScriptHost

/// `hubscript jobs history [JOB]`: the journal's record of fires, newest first.
struct JobsHistoryCommand: Command {
    static let configuration = CommandConfiguration(
        name: "jobs history", abstract: "Show the recorded fires, skips and misses, newest first.",
        usage: "[JOB] [--limit N] [--json]",
        options: [
            OptionSpec(name: "limit", valueName: "n", help: "How many (default 50)."),
            OptionSpec(name: "json", valueName: nil, help: "One JSON object a fire (type \"fire\") on stdout."),
        ] + CommonOptions.specs,
        discussion: """
        Each row is one decision about one fire: succeeded, failed, skipped (already fired,
        or the overlap policy), missed (one row for a range of missed fires), or queued and
        fired while it waits or runs. Times are RFC 3339 UTC. A fire's run is in hubscript
        runs show RUN_ID.
        """)

    let common: CommonOptions.Values
    let job: String?
    let limit: Int
    let json: Bool

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.count <= 1 else { throw UsageError("expected at most one JOB") }
        job = arguments.positionals.first
        common = try CommonOptions.Values(arguments)
        json = arguments.flag("json")
        guard let l = Int(arguments.value("limit") ?? "50"), l > 0 else { throw UsageError("--limit takes a positive number") }
        limit = l
    }

    func run() throws -> Int32 {
        let journal = try common.openJournal()
        let fires = try journal.fires(job: job, limit: limit)
        if json {
            let output = ConsoleOutput(json: true, timestamps: true)
            for fire in fires { output.event("fire", FireText.json(fire)) }
            return ExitCode.success
        }
        if fires.isEmpty {
            Console.out(job.map { "no fires of \(TerminalText.field($0)) yet\n" } ?? "no fires yet\n")
            return ExitCode.success
        }
        var rows = [["RUN ID", "STATUS", "STARTED", "DURATION", "EXIT", "REASON"]]
        for r in fires {
            let status = r.status == .queued || r.status == .fired ? FireText.outcome(r, locks: journal.runLocks(state: common.state)) : r.status.rawValue
            let reason = [r.reason, r.notified.map { "on_failure: \($0)" }].compactMap { $0 }.joined(separator: "; ")
            rows.append([r.runID, status, FireText.time(r.startedAt), FireText.duration(r.durationMs),
                         r.exitCode.map(String.init) ?? "—", reason])
        }
        Console.out(FireText.table(rows.map { $0.map(TerminalText.line) }))
        return ExitCode.success
    }
}
