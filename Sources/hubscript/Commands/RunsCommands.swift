import Foundation
import HubBindings
import ScriptHost

enum RunsCommands {
    static let group = CommandGroup(
        name: "runs", abstract: "List, show and resume journalled runs.",
        subcommands: [HubscriptCLI.entry(RunsListCommand.self), HubscriptCLI.entry(RunsShowCommand.self),
                      HubscriptCLI.entry(RunsResumeCommand.self)])

    static func journal(_ common: CommonOptions.Values) throws -> Journal {
        try Journal(path: try common.state.journalFile.path)
    }

    /// Journalled params (JSON) back as command-line `name=value` pairs.
    static func cliParams(_ params: ScriptValue) -> [(String, String)] {
        guard case .object(let fields) = params else { return [] }
        return fields.sorted { $0.key < $1.key }.map { name, value in
            switch value {
            case .string(let s): return (name, s)
            case .integer(let i): return (name, String(i))
            case .number(let d): return (name, String(d))
            case .bool(let b): return (name, b ? "true" : "false")
            case .array(let items): return (name, items.compactMap(\.stringValue).joined(separator: ","))
            default: return (name, "")
            }
        }
    }

    static func time(_ date: Date?) -> String {
        guard let date else { return "—" }
        let f = ISO8601DateFormatter()
        return f.string(from: date)
    }
}

struct RunsListCommand: Command {
    static let configuration = CommandConfiguration(
        name: "runs list", abstract: "List recent runs, newest first.", usage: "[--limit N]",
        options: [OptionSpec(name: "limit", valueName: "n", help: "How many (default 20).")] + CommonOptions.specs)

    let common: CommonOptions.Values
    let limit: Int

    init(_ arguments: ParsedArguments) throws {
        common = CommonOptions.Values(arguments)
        guard let l = Int(arguments.value("limit") ?? "20"), l > 0 else { throw UsageError("--limit takes a positive number") }
        limit = l
    }

    func run() throws -> Int32 {
        let runs = try RunsCommands.journal(common).listRuns(limit: limit)
        if runs.isEmpty { Console.out("no runs yet\n"); return ExitCode.success }
        let f = TerminalText.field
        var text = "RUN ID                               STATUS     MODE   WRITES  REPLAYED  STARTED               RECIPE\n"
        for r in runs {
            text += f(r.id).padding(toLength: 36, withPad: " ", startingAt: 0) + " "
                + r.status.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0) + " "
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
        name: "runs show", abstract: "Show a run and its writes.", usage: "ID", options: CommonOptions.specs)

    let common: CommonOptions.Values
    let id: String

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.count == 1 else { throw UsageError("expected one run ID") }
        id = arguments.positionals[0]
        common = CommonOptions.Values(arguments)
    }

    func run() throws -> Int32 {
        let journal = try RunsCommands.journal(common)
        guard let r = try journal.run(id: id) else {
            Console.err("error: no run \(id) in the journal (hubscript runs list shows the recent ones)\n")
            return ExitCode.usage
        }
        // Paths, params, keys and errors come from recipes and the Hub: escaped.
        let f = TerminalText.field
        var text = """
        run       \(f(r.id))
        recipe    \(f(DisplayPath.relative(URL(fileURLWithPath: r.recipePath)))) (sha256 \(r.recipeSHA256.prefix(16))…)
        params    \(f(r.paramsJSON))
        profile   \(f(r.profile))
        mode      \(r.mode.rawValue), \(r.status.rawValue), attempts \(r.attempts)
        started   \(RunsCommands.time(r.startedAt)), finished \(RunsCommands.time(r.finishedAt))
        counts    \(r.counts.reads) reads, \(r.counts.writes) writes, \(r.counts.replayed) replayed, \(r.counts.planned) planned, \(r.counts.failed) failed

        """
        let writes = try journal.writes(runID: id)
        text += writes.isEmpty ? "no writes\n" : "\nWRITES\n"
        for w in writes {
            text += "  \(String(w.sequence).padding(toLength: 4, withPad: " ", startingAt: 0)) \(w.state.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0)) \(f(w.method).padding(toLength: 7, withPad: " ", startingAt: 0)) \(f(w.path))  \(f(w.key))\(w.error.map { "  (\(f($0)))" } ?? "")\n"
        }
        Console.out(text)
        return ExitCode.success
    }
}

struct RunsResumeCommand: Command {
    static let configuration = CommandConfiguration(
        name: "runs resume", abstract: "Resume a run: its recipe runs again, journalled writes replay, the rest are sent.",
        usage: "ID [--force]",
        options: [
            OptionSpec(name: "force", valueName: nil, help: "Resume even if the recipe file changed since the run started."),
            OptionSpec(name: "json", valueName: nil, help: "Write NDJSON events to stdout."),
        ] + CommonOptions.specs)

    let common: CommonOptions.Values
    let id: String
    let force: Bool
    let json: Bool

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.count == 1 else { throw UsageError("expected one run ID") }
        id = arguments.positionals[0]
        common = CommonOptions.Values(arguments)
        force = arguments.flag("force")
        json = arguments.flag("json")
    }

    func run() throws -> Int32 {
        guard let r = try RunsCommands.journal(common).run(id: id) else {
            Console.err("error: no run \(id) in the journal (hubscript runs list shows the recent ones)\n")
            return ExitCode.usage
        }
        let params = (try? JSONCodec.decode(r.paramsJSON)) ?? .object([:])
        let profileCommon = CommonOptions.Values(profile: common.profile ?? r.profile, config: common.config, state: common.state)
        var launcher = RecipeLauncher(common: profileCommon, json: json)
        launcher.request.runID = id
        launcher.request.force = force
        return launcher.launch(path: DisplayPath.relative(URL(fileURLWithPath: r.recipePath)),
                               params: RunsCommands.cliParams(params), paramsFile: nil)
    }
}
