import Foundation
import ScriptHost
import RecipeModules
import Configuration
import RunJournal
import SystemText

/// `hubscript run FILE`: validates the manifest and params, checks Capabilities, then
/// runs the recipe against the profile's Hub with every write journalled.
struct RunCommand: Command {
    static let recipeOptions: [OptionSpec] = [
        OptionSpec(name: "param", valueName: "name=value", help: "Set a recipe parameter.", repeatable: true),
        OptionSpec(name: "params-file", valueName: "file", help: "Read parameters from a JSON object."),
        OptionSpec(name: "json", valueName: nil, help: "Write NDJSON events (prints, logs, writes, summary) to stdout."),
        OptionSpec(name: "timeout", valueName: "seconds", help: "Wall-clock limit for the run (overrides the manifest)."),
        OptionSpec(name: "max-writes", valueName: "n", help: "Stop before the first write past n (with limits.writes, the lower wins)."),
        OptionSpec(name: "lib", valueName: "dir", help: "Add a folder that require() may load modules from.", repeatable: true),
        OptionSpec(name: "allow", valueName: "perm,perm", help: "Refuse the recipe (exit 3) if its needs go beyond these permissions.", repeatable: true),
        OptionSpec(name: "out", valueName: "dir", help: "Where export.* writes (default: runs/<run id>/ in the state directory)."),
        VaultKeyFileOption.spec,
    ] + OutputOptions.specs + CommonOptions.specs

    static let configuration = CommandConfiguration(
        name: "run",
        abstract: "Run a recipe.",
        usage: "FILE|LIB:RECIPE [--param name=value]… [--params-file F.json] [--json] [--timeout S] [--allow perm,…] [--dry-run] [--run-id ID]",
        options: recipeOptions + [
            OptionSpec(name: "dry-run", valueName: nil, help: "Read live, record writes without sending them, print the plan."),
            OptionSpec(name: "run-id", valueName: "id", help: "Run under this id; if the journal has it, resume it (done writes replay)."),
            OptionSpec(name: "force", valueName: nil, help: "With --run-id: resume even if the recipe file changed."),
        ],
        discussion: """
        LIB:RECIPE runs recipe RECIPE.lua of library LIB of the configuration
        (libraries = { LIB = "folder" or "git+URL@COMMIT" }), pinned in hubscript.lock.

        Exit codes: 0 success, 1 the recipe failed, 2 usage or configuration error
        (including a manifest or parameter problem, or library files that no longer match
        hubscript.lock: nothing of the recipe runs), 3 capability denied, needs beyond
        --allow, or the Hub refuses the profile's credential, 4 a limit stopped the run,
        7 the Hub could not be reached.
        """)

    let path: String
    let params: [(String, String)]
    let paramsFile: String?
    let launcher: RecipeLauncher

    init(_ arguments: ParsedArguments) throws {
        let written = try RecipeHelp.recipePath(arguments)
        (params, paramsFile) = try Self.params(arguments)
        var launcher = try Self.launcher(arguments)
        path = try RecipeHelp.resolve(written, libraries: launcher.request.libraries)
        launcher.request.runID = arguments.value("run-id")
        launcher.request.force = arguments.flag("force")
        launcher.request.resumesOnlyUnfinished = true
        if arguments.flag("dry-run") { launcher.request.mode = .plan }
        self.launcher = launcher
    }

    static func help(for args: [String]) throws -> String { try RecipeHelp.text(args: args, commandHelp: helpText) }

    static func params(_ arguments: ParsedArguments) throws -> ([(String, String)], String?) {
        do { return (try PreparedRecipe.parseParamArguments(arguments.all("param")), arguments.value("params-file")) } catch {
            throw UsageError("\(error)")
        }
    }

    /// The launcher for the recipe options shared by run and plan.
    static func launcher(_ arguments: ParsedArguments) throws -> RecipeLauncher {
        try VaultKeyFileOption.read(arguments)
        var launcher = RecipeLauncher(common: try CommonOptions.Values(arguments), json: arguments.flag("json"))
        launcher.chatter = try OutputOptions.Values(arguments)
        if let t = arguments.value("timeout") {
            guard let seconds = Double(t), seconds > 0, seconds.isFinite else {
                throw UsageError("--timeout takes a positive number of seconds, got '\(t)'")
            }
            launcher.request.timeout = seconds
        }
        if let m = arguments.value("max-writes") {
            guard let n = Int(m), n >= 0 else { throw UsageError("--max-writes takes a whole number, got '\(m)'") }
            launcher.request.maxWrites = n
        }
        launcher.request.allow = try allow(arguments)
        launcher.request.libraryFolders = arguments.all("lib").map { URL(fileURLWithPath: $0) }
        launcher.request.libraries = try launcher.common.configuration.libraries(state: launcher.common.state)
        launcher.request.outputFolder = arguments.value("out").map { URL(fileURLWithPath: $0, isDirectory: true) }
        return launcher
    }

    /// `--allow a,b --allow c`: the permissions the recipe may ask for (nil without the option).
    static func allow(_ arguments: ParsedArguments) throws -> AllowedPermissions? {
        let given = arguments.all("allow")
        guard !given.isEmpty else { return nil }
        let names = given.flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }.filter { !$0.isEmpty }
        if let problem = AllowedPermissions.problem(in: names) { throw UsageError("--\(problem)") }
        return AllowedPermissions(names, caller: "--allow")
    }

    func run() throws -> Int32 {
        launcher.launch(path: path, params: params, paramsFile: paramsFile) { plan, _, output, _ in
            if launcher.json {
                output.event("plan", ["plan": plan.jsonValue()])
            } else {
                output.writeStderr(PlanTable.render(plan, coloured: TerminalStyle.isColoured(.stderr)))
            }
        }
    }
}

/// `hubscript plan FILE [--out PLAN.json]`: a dry run whose writes are saved as a plan.
struct PlanCommand: Command {
    static let configuration = CommandConfiguration(
        name: "plan",
        abstract: "Run a recipe with reads live and writes recorded, not sent; print or save the plan.",
        usage: "FILE|LIB:RECIPE [--param name=value]… [--out PLAN.json]\n       hubscript plan show PLAN.json [--json]",
        options: RunCommand.recipeOptions.filter { $0.name != "out" } + [
            OptionSpec(name: "out", valueName: "file", help: "Save the plan as JSON (for hubscript apply) too; its exports go to a folder beside it (PLAN.exports/)."),
            OptionSpec(name: "detailed-exitcode", valueName: nil, help: "Exit 0 when the plan has no writes, 5 when it has some (as terraform plan)."),
        ],
        discussion: """
        Prints the plan's table; with --out also saves it. Apply a saved plan with
        'hubscript apply PLAN.json': it sends exactly the planned writes, or stops.
        'hubscript plan show PLAN.json' prints a saved plan (a recipe file named show is
        planned as 'hubscript plan ./show').
        With --out PLAN.json the plan's exports go to PLAN.exports/ beside it (the apply's go
        to the run's folder); without it, to the run's folder.
        With --detailed-exitcode: 0 no changes, 5 changes planned; errors keep their codes (1-4).
        """)

    let path: String
    let params: [(String, String)]
    let paramsFile: String?
    let out: String?
    let detailedExitCode: Bool
    let launcher: RecipeLauncher
    let common: CommonOptions.Values

    init(_ arguments: ParsedArguments) throws {
        let written = try RecipeHelp.recipePath(arguments)
        (params, paramsFile) = try RunCommand.params(arguments)
        out = arguments.value("out")
        detailedExitCode = arguments.flag("detailed-exitcode")
        var launcher = try RunCommand.launcher(arguments)
        path = try RecipeHelp.resolve(written, libraries: launcher.request.libraries)
        launcher.request.outputFolder = out.map(PlanFileExports.folder(forPlanAt:))
        launcher.request.mode = .plan
        self.launcher = launcher
        common = launcher.common
    }

    static func help(for args: [String]) throws -> String {
        try RecipeHelp.text(args: args, commandHelp: helpText, options: configuration.options)
    }

    func run() throws -> Int32 {
        var launcher = self.launcher
        launcher.detailedExitCode = detailedExitCode
        return launcher.launch(path: path, params: params, paramsFile: paramsFile) { plan, masking, output, making in
            if !launcher.json { output.writeStderr(PlanTable.render(plan, coloured: TerminalStyle.isColoured(.stderr))) }
            if let out {
                let file = URL(fileURLWithPath: out)
                try plan.save(to: file, masking: masking)
                let shown = TerminalText.field(out)
                let required: Int
                do { required = try PlanApprovals.record(savedAt: file, making: making, config: common.configuration).1 } catch {
                    // A plan the journal does not hold could not be approved: no file is left.
                    try? FileManager.default.removeItem(at: file)
                    throw error
                }
                output.writeStderr("plan saved to \(shown): \(plan.writes.count) writes; "
                    + (required == 0 ? "apply it with hubscript apply \(shown)\n"
                        : "it needs \(required) approval\(required == 1 ? "" : "s") (hubscript approve \(TerminalText.field(plan.runID))) before hubscript apply \(shown)\n"))
            } else if launcher.json {
                output.event("plan", ["plan": plan.jsonValue()])
            }
        }
    }
}

extension ExitCode {
    /// `plan --detailed-exitcode`: the plan has writes (terraform's 2 is taken by usage errors).
    static let changesPlanned: Int32 = 5
}

/// `hubscript apply PLAN.json`: runs the plan's recipe under the plan's run id, sending
/// a write only if it is the plan's next write.
struct ApplyCommand: Command {
    static let configuration = CommandConfiguration(
        name: "apply",
        abstract: "Apply a saved plan: run its recipe again, sending only the planned writes.",
        usage: "PLAN.json [--yes] [--json]",
        options: [
            OptionSpec(name: "yes", valueName: nil, help: "Do not ask before sending (apply asks only when stdin and stdout are a terminal)."),
            OptionSpec(name: "json", valueName: nil, help: "Write NDJSON events to stdout (never asks)."),
            OptionSpec(name: "timeout", valueName: "seconds", help: "Wall-clock limit for the run."),
            OptionSpec(name: "lib", valueName: "dir", help: "Add a folder that require() may load modules from.", repeatable: true),
            VaultKeyFileOption.spec,
        ] + OutputOptions.specs + CommonOptions.specs,
        discussion: """
        The plan is refused if the recipe file, the profile or the params changed since it was made.
        On a terminal (stdin and stdout) apply shows the plan and asks "Apply N writes to HUB? [y/N]"
        before sending anything; --yes skips the question. Piped, redirected or with --json it never asks.
        Answering anything but y or yes sends nothing and exits with 1.
        """)

    let planPath: String
    let launcher: RecipeLauncher
    let yes: Bool

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.count == 1 else { throw UsageError("expected one PLAN.json") }
        planPath = arguments.positionals[0]
        yes = arguments.flag("yes")
        launcher = try RunCommand.launcher(arguments)
    }

    func run() throws -> Int32 {
        let plan: Plan
        do { plan = try Plan.load(from: URL(fileURLWithPath: planPath)) } catch {
            return JSONEvents.refuse("\(error)", json: launcher.json)
        }
        var launcher = self.launcher
        launcher.request.mode = .apply(plan)
        guard case .object(let params) = plan.params else {
            return JSONEvents.refuse("the plan's params are not a JSON object; make a new plan", json: launcher.json, runID: plan.runID)
        }
        let gate: PlanApplyGate
        do { gate = try PlanApplyGate.check(plan, params: params, common: launcher.common) } catch let refusal as PlanApprovalError {
            return JSONEvents.refuse(refusal.message, json: launcher.json, runID: plan.runID, exitCode: ExitCode.capabilityDenied)
        }
        if !plan.writes.isEmpty, ApplyConfirmation.shouldAsk(yes: yes, json: launcher.json),
           !ApplyConfirmation.wouldBeRefused(plan, common: launcher.common),
           !ApplyConfirmation.ask(plan, hub: launcher.common.hub) {
            Console.err("apply cancelled: nothing was sent\n")
            return ExitCode.recipeFailed
        }
        let code = launcher.launch(path: plan.recipeDisplayPath, params: [], paramsFile: nil, paramValues: params)
        gate.recordApply(exitCode: code)
        return code
    }
}
