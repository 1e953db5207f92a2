import Foundation
import HubClient
import ScriptHost
import RunJournal
import Runs

enum RunsCommands {
    static let group = CommandGroup(
        name: "runs", abstract: "List, show, resume, repair and prune journalled runs.",
        subcommands: [HubscriptCLI.entry(RunsListCommand.self), HubscriptCLI.entry(RunsShowCommand.self),
                      HubscriptCLI.entry(RunsResumeCommand.self), HubscriptCLI.entry(RunsRepairCommand.self),
                      HubscriptCLI.entry(RunsPruneCommand.self)])

    /// The journal, refused if it is 0 bytes; `check` (resume: `.always`) also checks its pages.
    static func journal(_ common: CommonOptions.Values, check: Journal.IntegrityCheck = .skip) throws -> Journal {
        try common.openJournal(check: check)
    }

    /// A run as a `--json` object: the fields of a run's `summary` (run id, counts over
    /// every pass, exit code, output folder, schema version) with the status shown
    /// (`interrupted` for a dead run), its params as JSON, attempts, times, and what bounds it.
    static func jsonFields(_ r: RunRecord, locks: any RunLocks) -> [String: ScriptValue] {
        var fields = JSONEvents.counts(r.counts)
        fields["run_id"] = .string(r.id)
        fields["status"] = .string(locks.effectiveStatus(r))
        // Known once a pass ended (null while running, and after a pass that died).
        fields["exit_code"] = r.exitCode.map { .integer(Int64($0)) } ?? .null
        fields["output_folder"] = r.outputFolder.map(ScriptValue.string) ?? .null
        fields["schema_version"] = .integer(JSONEvents.schemaVersion)
        fields["mode"] = .string(r.mode.rawValue)
        fields["recipe"] = .string(r.recipePath)
        fields["recipe_sha256"] = .string(r.recipeSHA256)
        fields["params"] = (try? JSONCodec.decode(r.paramsJSON)) ?? .string(r.paramsJSON)
        fields["profile"] = .string(r.profile)
        fields["attempts"] = .integer(Int64(r.attempts))
        fields["started_at"] = .string(time(r.startedAt))
        fields["finished_at"] = r.finishedAt.map { .string(time($0)) } ?? .null
        fields["max_writes"] = r.maxWrites.map { .integer(Int64($0)) } ?? .null
        fields["timeout_seconds"] = r.timeoutSeconds.map(ScriptValue.number) ?? .null
        return fields
    }

    static func time(_ date: Date?) -> String {
        guard let date else { return "—" }
        let f = ISO8601DateFormatter()
        return f.string(from: date)
    }
}

struct RunsListCommand: Command {
    static let configuration = CommandConfiguration(
        name: "runs list", abstract: "List recent runs, newest first.", usage: "[--limit N] [--json]",
        options: [
            OptionSpec(name: "limit", valueName: "n", help: "How many (default 20)."),
            OptionSpec(name: "json", valueName: nil, help: "One JSON object a run (type \"run\") on stdout."),
        ] + CommonOptions.specs,
        discussion: "A run whose process died (killed, crashed) is shown as interrupted; resume it with hubscript runs resume ID.")

    let common: CommonOptions.Values
    let limit: Int
    let json: Bool

    init(_ arguments: ParsedArguments) throws {
        common = try CommonOptions.Values(arguments)
        json = arguments.flag("json")
        guard let l = Int(arguments.value("limit") ?? "20"), l > 0 else { throw UsageError("--limit takes a positive number") }
        limit = l
    }

    func run() throws -> Int32 {
        let journal = try RunsCommands.journal(common)
        let runs = try journal.listRuns(limit: limit)
        let locks = journal.runLocks(state: common.state)
        if json {
            let output = ConsoleOutput(json: true, timestamps: true)
            for r in runs { output.event("run", RunsCommands.jsonFields(r, locks: locks)) }
            return ExitCode.success
        }
        if runs.isEmpty { Console.out("no runs yet\n"); return ExitCode.success }
        let f = TerminalText.field
        var text = "RUN ID                               STATUS      MODE   WRITES  REPLAYED  STARTED               RECIPE\n"
        for r in runs {
            text += f(r.id).padding(toLength: 36, withPad: " ", startingAt: 0) + " "
                + locks.effectiveStatus(r).padding(toLength: 11, withPad: " ", startingAt: 0) + " "
                + r.mode.rawValue.padding(toLength: 6, withPad: " ", startingAt: 0) + " "
                + String(r.counts.writes).padding(toLength: 7, withPad: " ", startingAt: 0) + " "
                + String(r.counts.replayed).padding(toLength: 9, withPad: " ", startingAt: 0) + " "
                + RunsCommands.time(r.startedAt).padding(toLength: 21, withPad: " ", startingAt: 0) + " "
                + f(DisplayPath.relative(URL(fileURLWithPath: r.recipePath))) + "\n"
        }
        Console.out(text)
        return ExitCode.success
    }
}

struct RunsShowCommand: Command {
    static let configuration = CommandConfiguration(
        name: "runs show", abstract: "Show a run and its writes, or what it said (--output).",
        usage: "ID [--output] [--limit N] [--offset K | --tail N] [--json]",
        options: [
            OptionSpec(name: "output", valueName: nil, help: "Show what the run said (prints, logs, warnings, its error and summary)."),
            OptionSpec(name: "json", valueName: nil, help: "The run and a page of its writes as one JSON object (type \"run\"); with --output, one object a line (type \"output\")."),
        ] + RunsShowPage.specs + CommonOptions.specs,
        discussion: """
        A run shows its first 100 writes (--limit, --offset and --tail choose others) and
        says how to see the rest. --output shows every line the journal kept of what the
        run said, each attempt under its own heading; the journal keeps 10,000 lines or
        1 MiB of a run's output, then one line saying how much it left out.
        """)

    let common: CommonOptions.Values
    let id: String
    let json: Bool
    /// `--output`: what the run said, not its writes.
    let showsOutput: Bool
    let page: RunsShowPage

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.count == 1 else { throw UsageError("expected one run ID") }
        id = arguments.positionals[0]
        common = try CommonOptions.Values(arguments)
        json = arguments.flag("json")
        showsOutput = arguments.flag("output")
        page = try RunsShowPage(arguments)
    }

    func run() throws -> Int32 {
        let journal = try RunsCommands.journal(common)
        guard let r = try journal.run(id: id) else {
            return JSONEvents.refuse("no run \(id) in the journal (hubscript runs list shows the recent ones)", json: json, runID: id)
        }
        if showsOutput { return try showOutput(journal, r) }
        // Only the page is read: a run of 40,000 writes is not loaded whole.
        let writeTotal = try journal.writeCount(runID: id)
        let shown = page.range(of: writeTotal, defaultLimit: RunsShowPage.defaultWrites)
        let writes = try journal.writesInRunOrder(runID: id, offset: shown.lowerBound, limit: shown.count)
        let record = try journal.recordedReadTotals(runID: id)
        let kept = try journal.outputTotals(runID: id)
        if json {
            var fields = RunsCommands.jsonFields(r, locks: journal.runLocks(state: common.state))
            fields["reads_recorded"] = .integer(Int64(record.count))
            fields["reads_recorded_bytes"] = .integer(Int64(record.bytes))
            fields["writes_total"] = .integer(Int64(writeTotal))
            fields["writes_offset"] = .integer(Int64(shown.lowerBound))
            fields["output_lines"] = .integer(Int64(kept.lines))
            fields["writes_journalled"] = .array(writes.enumerated().map { index, w in
                .object([
                    "order": .integer(Int64(shown.lowerBound + index + 1)),
                    "seq": .integer(Int64(w.sequence)), "state": .string(w.state.rawValue), "method": .string(w.method),
                    "path": .string(w.path), "key": .string(w.key), "attempts": .integer(Int64(w.attempts)),
                    "http_status": w.httpStatus.map { .integer(Int64($0)) } ?? .null, "error": w.error.map(ScriptValue.string) ?? .null,
                ])
            })
            ConsoleOutput(json: true, timestamps: true).event("run", fields)
            return ExitCode.success
        }
        // Paths, params, keys and errors come from recipes and the Hub: escaped.
        let f = TerminalText.field
        var text = """
        run       \(f(r.id))
        recipe    \(f(DisplayPath.relative(URL(fileURLWithPath: r.recipePath)))) (sha256 \(r.recipeSHA256.prefix(16))…)
        params    \(f(r.paramsJSON))
        profile   \(f(r.profile))
        mode      \(r.mode.rawValue), \(journal.runLocks(state: common.state).effectiveStatus(r)), attempts \(r.attempts)
        started   \(RunsCommands.time(r.startedAt)), finished \(RunsCommands.time(r.finishedAt))
        counts    \(r.counts.reads) reads, \(r.counts.writes) writes, \(r.counts.replayed) replayed, \(r.counts.planned) planned, \(r.counts.failed) failed (every pass)
        limits    \(r.maxWrites.map { "max writes \($0)" } ?? "no --max-writes"), \(r.timeoutSeconds.map { "timeout \(Self.seconds($0)) s" } ?? "the manifest's timeout")

        """
        if record.count > 0 {
            text += "record    \(record.count) reads recorded (\(record.bytes) bytes): a resume is served them\n"
        }
        text += "output    " + (kept.lines == 0 ? "none kept\n" : "\(kept.lines) lines kept: hubscript runs show \(f(r.id)) --output\n")
        text += writeTotal == 0 ? "no writes\n" : "\nWRITES (every pass, in the order the run first made them)\n"
        if !writes.isEmpty {
            let width = max(1, String(shown.upperBound).count)
            func pad(_ s: String, _ n: Int) -> String { s.padding(toLength: max(n, s.count), withPad: " ", startingAt: 0) }
            text += "  \(pad("#", width)) \(pad("STATE", 8)) \(pad("TRIES", 5)) \(pad("METHOD", 7)) PATH  KEY\n"
            for (index, w) in writes.enumerated() {
                text += "  \(pad(String(shown.lowerBound + index + 1), width)) \(pad(w.state.rawValue, 8)) \(pad(String(w.attempts), 5)) \(pad(f(w.method), 7)) \(f(w.path))  \(f(w.key))\(w.error.map { "  (\(f($0)))" } ?? "")\n"
            }
        }
        text += RunsShowPage.note("writes", shown: shown, of: writeTotal, runID: f(r.id), flag: "") ?? ""
        Console.out(text)
        return ExitCode.success
    }
}

extension RunsShowCommand {
    /// `30` for 30.0, `2.5` for 2.5.
    static func seconds(_ s: Double) -> String {
        s == s.rounded() && abs(s) < 1e15 ? String(Int64(s)) : String(s)
    }
}

struct RunsResumeCommand: Command {
    static let configuration = CommandConfiguration(
        name: "runs resume", abstract: "Resume a run: its recipe runs again, journalled writes replay, the rest are sent.",
        usage: "ID [--force] [--max-writes N] [--timeout S] [--json] [--quiet|--verbose] [--no-progress]",
        options: [
            OptionSpec(name: "force", valueName: nil, help: "Resume even if the recipe file changed since the run started."),
            OptionSpec(name: "json", valueName: nil, help: "Write NDJSON events to stdout."),
            OptionSpec(name: "max-writes", valueName: "n", help: "Replace the run's journalled --max-writes (counted over the whole run)."),
            OptionSpec(name: "timeout", valueName: "seconds", help: "Replace the run's journalled --timeout."),
            OptionSpec(name: "lib", valueName: "dir", help: "Add a folder that require() may load modules from.", repeatable: true),
            OptionSpec(name: "allow", valueName: "perm,perm", help: "Refuse the recipe (exit 3) if its needs go beyond these permissions.", repeatable: true),
            VaultKeyFileOption.spec,
        ] + OutputOptions.specs + CommonOptions.specs,
        discussion: """
        The run keeps its params, profile, --max-writes and --timeout unless given here
        (--max-writes counts every write of the run, earlier passes' too). The Hub reads
        the run already made are answered from its record, so it makes the same decisions
        and writes the same exports as a run that never stopped; reads past the point
        where it stopped are live. A run that succeeded has nothing to resume: it says so,
        exits 0 and leaves its outputs as they are. The configuration's libraries are
        checked against hubscript.lock as for a run.
        """)

    let common: CommonOptions.Values
    let id: String
    let force: Bool
    let json: Bool
    /// `--max-writes`/`--timeout` given to the resume (nil: the journalled ones).
    let bounds: HubRunRequest
    /// --quiet, --verbose, --no-progress: as for a run.
    let chatter: OutputOptions.Values

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.count == 1 else { throw UsageError("expected one run ID") }
        id = arguments.positionals[0]
        force = arguments.flag("force")
        json = arguments.flag("json")
        let given = try RunCommand.launcher(arguments)
        common = given.common   // the configuration, read once for the whole resume
        bounds = given.request
        chatter = given.chatter
    }

    func run() throws -> Int32 {
        let r: RunRecord?
        do { r = try RunsCommands.journal(common, check: .always).run(id: id) } catch {
            return JSONEvents.refuse("\(error)", json: json, runID: id)
        }
        guard let r else {
            return JSONEvents.refuse("no run \(id) in the journal (hubscript runs list shows the recent ones)", json: json, runID: id)
        }
        if ReplDriver.isSession(recipePath: r.recipePath) {
            return JSONEvents.refuse("run \(id) is a hubscript eval or repl session, which cannot be resumed (its lines are not kept); hubscript runs show \(id) lists the writes it sent", json: json, runID: id)
        }
        guard case .object(let params)? = try? JSONCodec.decode(r.paramsJSON) else {
            return JSONEvents.refuse("the journal's params of run \(id) are not a JSON object; start a new run", json: json, runID: id)
        }
        // A param that held a loaded secret's value is journalled masked: the recipe would
        // get the mask, not the value. Its params must be given again.
        if r.paramsJSON.contains("<secret ") {
            return JSONEvents.refuse("run \(id) was started with a param holding a secret's value, which the journal keeps masked; resume it by running the recipe again with the same params and --run-id \(id)", json: json, runID: id)
        }
        let profileCommon = common.with(profile: common.profile ?? r.profile)
        var launcher = RecipeLauncher(common: profileCommon, json: json)
        launcher.chatter = chatter
        launcher.journalCheck = .unlessClosedCleanly   // checked above; unchanged since, unless another process ran
        launcher.request.runID = id
        launcher.request.force = force
        launcher.request.resumesOnlyUnfinished = true
        // Without --max-writes or --timeout, HubRecipeRun keeps the journalled ones.
        launcher.request.maxWrites = bounds.maxWrites
        launcher.request.timeout = bounds.timeout
        // The run's modules come from the same places as a run's: --lib folders and the
        // configuration's libraries, pins checked.
        launcher.request.libraryFolders = bounds.libraryFolders
        launcher.request.libraries = bounds.libraries
        launcher.request.allow = bounds.allow
        return launcher.launch(path: DisplayPath.relative(URL(fileURLWithPath: r.recipePath)),
                               params: [], paramsFile: nil, paramValues: params)
    }
}
