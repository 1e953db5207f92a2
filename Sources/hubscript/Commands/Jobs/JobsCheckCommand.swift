import Foundation
import SystemText
import ScriptHost
import Configuration
import HubClient

/// `hubscript jobs check`: every job and trigger of the configuration checked as a fire
/// or an event would check it, before one comes (`ConfigurationCheck`).
struct JobsCheckCommand: Command {
    static let configuration = CommandConfiguration(
        name: "jobs check", abstract: "Check every job and trigger: recipe, params, profile, schedule, zone, allow, Dispatch.",
        usage: "[--json] [--config FILE]",
        options: [ConfigCheckRun.jsonOption] + CommonOptions.specs,
        discussion: ConfigCheckRun.discussion)

    let check: ConfigCheckRun

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.isEmpty else { throw UsageError("jobs check takes no arguments (--config FILE names the configuration)") }
        check = ConfigCheckRun(arguments, explicit: arguments.value("config"))
    }

    func run() throws -> Int32 { try check.run() }
}

/// The configuration check as `jobs check` and `check --config` run it: the options
/// read without loading the configuration (a broken one is what it reports), the
/// report printed one line per job and trigger.
struct ConfigCheckRun {
    static let jsonOption = OptionSpec(name: "json", valueName: nil,
                                       help: "One JSON object a job or trigger (type \"config_check\"), then a summary, on stdout.")

    static let discussion = """
        For each job and trigger: the recipe exists and loads (a file, or LIB:RECIPE among
        the pinned libraries), params match its manifest (names, types, required ones), the
        profile exists, the schedule and time zone parse, allow covers the recipe's needs,
        and the Dispatch targets (on_failure, the manifest's targets) exist. Prints ok or
        every problem with the configuration file's line. Exits 0 if all pass, 1 if any
        problem was found, 2 when no configuration file is found.
        """

    let explicit: String?
    let profile: String?
    let state: StateDirectory
    let json: Bool

    init(_ arguments: ParsedArguments, explicit: String?) {
        self.explicit = explicit
        profile = CommonOptions.value(arguments, "profile", environment: "HUBSCRIPT_PROFILE")
        state = CommonOptions.stateDirectory(arguments)
        json = arguments.flag("json")
    }

    func run() throws -> Int32 {
        guard let report = try ConfigurationCheck.run(explicit: explicit, profile: profile, state: state) else {
            throw HubConfigError("no configuration file was found: nothing to check (--config FILE, $HUBSCRIPT_CONFIG, ./hubscript.config.lua or ~/.config/hubscript/config.lua)")
        }
        let code = report.ok ? ExitCode.success : ExitCode.recipeFailed
        if json { printJSON(report, code: code) } else { printText(report) }
        return code
    }

    /// `FILE:LINE: message` (`FILE: message` without a line; the message alone when it
    /// names a place in the file itself, as Lua's syntax errors do).
    static func located(_ problem: ConfigurationCheck.Problem, file: URL) -> String {
        if problem.line == nil, problem.message.hasPrefix(file.path + ":") { return problem.message }
        return file.path + (problem.line.map { ":\($0)" } ?? "") + ": " + problem.message
    }

    private func printText(_ report: ConfigurationCheck) {
        var text = ""
        func lines(_ head: String, _ problems: [ConfigurationCheck.Problem]) {
            guard !problems.isEmpty else { text += "ok   \(head)\n"; return }
            text += "FAIL \(head)\n"
            for problem in problems {
                text += "     " + TerminalText.text(Self.located(problem, file: report.file)).replacingOccurrences(of: "\n", with: "\n     ") + "\n"
            }
        }
        if !report.fileProblems.isEmpty { lines(TerminalText.field(report.file.path), report.fileProblems) }
        for entry in report.entries {
            let recipe = entry.recipe.map { " (\(TerminalText.field($0)))" } ?? ""
            lines("\(entry.kind.rawValue) \(TerminalText.field(entry.name))\(recipe)", entry.problems)
        }
        let failed = report.entries.filter { !$0.ok }.count
        if report.entries.isEmpty && report.fileProblems.isEmpty {
            text += "no jobs or triggers in \(TerminalText.field(report.file.path))\n"
        } else if !report.entries.isEmpty {
            text += "\(report.entries.count - failed) passed, \(failed) failed\n"
        }
        Console.out(text)
    }

    private func printJSON(_ report: ConfigurationCheck, code: Int32) {
        let output = ConsoleOutput(json: true, timestamps: true)
        func problems(_ list: [ConfigurationCheck.Problem]) -> ScriptValue {
            .array(list.map { p in
                .object(["file": .string(report.file.path), "line": p.line.map { .integer(Int64($0)) } ?? .null, "message": .string(p.message)])
            })
        }
        if !report.fileProblems.isEmpty {
            output.event("config_check", ["kind": "configuration", "name": .string(report.file.path), "recipe": .null,
                                          "ok": .bool(false), "problems": problems(report.fileProblems)])
        }
        for entry in report.entries {
            output.event("config_check", ["kind": .string(entry.kind.rawValue), "name": .string(entry.name),
                                          "recipe": entry.recipe.map(ScriptValue.string) ?? .null,
                                          "ok": .bool(entry.ok), "problems": problems(entry.problems)])
        }
        var summary = JSONEvents.summary(status: report.ok ? "ok" : "failed", exitCode: code, runID: nil)
        let failed = report.entries.filter { !$0.ok }.count
        summary["passed"] = .integer(Int64(report.entries.count - failed))
        summary["failed"] = .integer(Int64(failed))
        summary["configuration_ok"] = .bool(report.fileProblems.isEmpty)
        output.event("summary", summary)
    }
}

extension ConfigCheckRun {
    /// What `hubscript check` adds for `check --config [FILE]`.
    static let checkOptions: [OptionSpec] = [
        OptionSpec(name: "config", valueName: nil,
                   help: "Check the configuration's jobs and triggers instead (as hubscript jobs check): FILE, else the one found."),
    ] + CommonOptions.specs.filter { $0.name != "config" }

    /// `check --config [FILE]`; nil without `--config`.
    init?(checkArguments arguments: ParsedArguments) throws {
        guard arguments.flag("config") else { return nil }
        guard arguments.positionals.count <= 1 else {
            throw UsageError("check --config takes at most one FILE, the configuration file (recipe files are checked without --config)")
        }
        self.init(arguments, explicit: arguments.positionals.first)
    }
}
