import Foundation
import SystemText
import ScriptHost
import RunJournal
import Configuration

/// `hubscript runs prune`: removes old runs from the journal with what they own.
struct RunsPruneCommand: Command {
    static let configuration = CommandConfiguration(
        name: "runs prune", abstract: "Remove old runs, their writes, reads, fires and export folders from the journal.",
        usage: "[--older-than AGE] [--keep-failed AGE] [--status S,S] [--recipe FILE] [--job NAME] [--batch N] [--dry-run] [--json]",
        options: [
            OptionSpec(name: "older-than", valueName: "age", help: "Remove runs started and ended longer ago than this (90d, 12h, 2w, 30m); default: the configuration's retention.older_than."),
            OptionSpec(name: "keep-failed", valueName: "age", help: "Keep runs that did not succeed (they can be resumed) until they are this old; default: the configuration's retention.keep_failed, else kept."),
            OptionSpec(name: "status", valueName: "s,s", help: "Only runs with these statuses: succeeded, failed, stopped, interrupted."),
            OptionSpec(name: "recipe", valueName: "file", help: "Only runs of this recipe file."),
            OptionSpec(name: "job", valueName: "name", help: "Only runs fired by this job (and its fire records)."),
            OptionSpec(name: "batch", valueName: "n", help: "Rows deleted a transaction (default 1000): smaller holds the journal's write lock for less time."),
            OptionSpec(name: "dry-run", valueName: nil, help: "Show what would be removed; remove nothing."),
            OptionSpec(name: "json", valueName: nil, help: "The report as one JSON object (type \"prune\") on stdout."),
        ] + CommonOptions.specs,
        discussion: """
        A run goes with its writes, recorded reads, fire records, trigger events and its
        export folder (runs/ID in the state directory). Never removed: a running run; a
        run that did not succeed (failed, stopped, interrupted: hubscript runs resume can
        still finish it) until it is older than --keep-failed; a plan not yet applied.
        Each job keeps its latest scheduled fire. Deletes go in batches of 1,000 rows, so
        runs and jobs go on meanwhile; a prune that is stopped is finished by the next.
        A SQLite journal made by this version gives the space back to the disk.
        """)

    let common: CommonOptions.Values
    let olderThan: RetentionAge
    let keepFailed: RetentionAge?
    let statuses: Set<PruneStatus>?
    let recipe: String?
    let job: String?
    let dryRun: Bool
    let batch: Int
    let json: Bool

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.isEmpty else { throw UsageError("runs prune takes no arguments (select runs with --older-than, --status, --recipe, --job)") }
        common = try CommonOptions.Values(arguments)
        let retention = common.configuration.retention
        func age(_ option: String) throws -> RetentionAge? {
            guard let text = arguments.value(option) else { return nil }
            guard let age = RetentionAge(text) else { throw UsageError("--\(option) takes \(RetentionAge.usage), got '\(text)'") }
            return age
        }
        guard let olderThan = try age("older-than") ?? retention?.olderThan else {
            throw UsageError("runs prune needs --older-than AGE (such as 90d), or retention = { older_than = \"90d\" } in the configuration")
        }
        self.olderThan = olderThan
        keepFailed = try age("keep-failed") ?? retention?.keepFailed
        if let keepFailed, keepFailed.seconds < olderThan.seconds {
            throw UsageError("--keep-failed (\(keepFailed)) is shorter than --older-than (\(olderThan)): runs that did not succeed are kept at least as long as the others")
        }
        if let list = arguments.value("status") {
            var chosen = Set<PruneStatus>()
            for name in list.split(separator: ",", omittingEmptySubsequences: false) {
                guard let status = PruneStatus(rawValue: name.trimmingCharacters(in: .whitespaces)) else {
                    throw UsageError("--status takes succeeded, failed, stopped or interrupted (comma-separated), got '\(name)'")
                }
                chosen.insert(status)
            }
            statuses = chosen
        } else {
            statuses = nil
        }
        recipe = arguments.value("recipe").map { AbsolutePath.of($0, resolvingParents: true) }
        job = arguments.value("job")
        dryRun = arguments.flag("dry-run")
        json = arguments.flag("json")
        guard let batch = Int(arguments.value("batch") ?? "1000"), batch > 0, batch <= 100_000 else {
            throw UsageError("--batch takes a number of rows from 1 to 100000, got '\(arguments.value("batch") ?? "")'")
        }
        self.batch = batch
    }

    func run() throws -> Int32 {
        let journal = try common.openJournal(check: .unlessClosedCleanly)
        var rule = RetentionRunner.rule(olderThan: olderThan, keepFailed: keepFailed)
        rule.statuses = statuses
        rule.recipePath = recipe
        rule.job = job
        let report = try RetentionRunner(journal: journal, state: common.state).prune(rule, dryRun: dryRun, batchRows: batch)
        if json {
            ConsoleOutput(json: true, timestamps: true).event("prune", Self.jsonFields(report, rule: rule, olderThan: olderThan, dryRun: dryRun))
        } else {
            Console.out(Self.describe(report, rule: rule, olderThan: olderThan, dryRun: dryRun))
        }
        return ExitCode.success
    }

    /// The report as `--json` prints it: the counts `describe` shows, by the same names in
    /// snake case, `kept` by reason (every reason, 0 included), and the cut-off time.
    static func jsonFields(_ report: PruneReport, rule: PruneRule, olderThan: RetentionAge, dryRun: Bool) -> [String: ScriptValue] {
        var kept: [String: ScriptValue] = [:]
        for reason in KeptReason.allCases { kept[reason.rawValue] = .integer(Int64(report.kept[reason] ?? 0)) }
        return [
            "dry_run": .bool(dryRun), "older_than": .string("\(olderThan)"), "started_before": .string(UTCTime.iso8601(rule.before)),
            "runs": .integer(Int64(report.runs)), "writes": .integer(Int64(report.writes)), "reads": .integer(Int64(report.reads)),
            "fires": .integer(Int64(report.fires)), "trigger_events": .integer(Int64(report.triggerEvents)),
            "export_folders": .integer(Int64(report.exportFolders)), "export_bytes": .integer(report.exportBytes),
            "journal_bytes_freed": .integer(report.journalBytesFreed), "finished_from_earlier": .integer(Int64(report.finishedFromEarlier)),
            "kept": .object(kept),
        ]
    }

    /// The report as `runs prune` prints it.
    static func describe(_ report: PruneReport, rule: PruneRule, olderThan: RetentionAge, dryRun: Bool) -> String {
        var text = dryRun
            ? "would remove, of runs older than \(olderThan) (started before \(UTCTime.iso8601(rule.before))) — nothing was removed (--dry-run):\n"
            : "removed, of runs older than \(olderThan) (started before \(UTCTime.iso8601(rule.before))):\n"
        let folders = "\(report.exportFolders)" + (report.exportFolders > 0 ? " (\(Self.bytes(report.exportBytes)))" : "")
        for (label, value) in [("runs", "\(report.runs)"), ("writes", "\(report.writes)"), ("reads", "\(report.reads)"),
                               ("fires", "\(report.fires)"), ("trigger events", "\(report.triggerEvents)"), ("export folders", folders)] {
            text += "  " + label.padding(toLength: 15, withPad: " ", startingAt: 0) + value + "\n"
        }
        if !dryRun { text += "  journal        \(Self.bytes(report.journalBytesFreed)) given back to the disk\n" }
        if report.finishedFromEarlier > 0 {
            text += "(\(report.finishedFromEarlier) of these runs were left half-removed by an earlier prune that stopped, and are now gone)\n"
        }
        let kept = report.kept.sorted { $0.key < $1.key }.filter { $0.value > 0 }
        if !kept.isEmpty {
            let names: [KeptReason: String] = [.running: "running", .resumable: "can still be resumed", .plan: "plans not yet applied",
                                               .referenced: "referred to"]
            text += "kept \(kept.map(\.value).reduce(0, +)) older runs: " + kept.map { "\($0.value) \(names[$0.key]!)" }.joined(separator: ", ") + "\n"
        }
        return text
    }

    /// `1234 bytes`, `56 KB`, `2.5 MB`.
    static func bytes(_ n: Int64) -> String {
        if n < 10_000 { return "\(n) bytes" }
        if n < 10_000_000 { return "\(n / 1000) KB" }
        return String(format: "%.1f MB", Double(n) / 1_000_000)
    }
}
