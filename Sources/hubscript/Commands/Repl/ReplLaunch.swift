import Foundation
import ScriptHost
import RecipeModules
import SystemText
import RunJournal

/// What `hubscript eval` and `repl` share: their options, and the launcher that runs
/// their session as a recipe (`ReplDriver`) with `ReplGate` as its gate.
enum ReplLaunch {
    static let options: [OptionSpec] = [
        OptionSpec(name: "apply", valueName: nil, help: "Send writes (default: plan them, show them, send nothing)."),
        OptionSpec(name: "max-items", valueName: "n", help: "Items of a lazy hub list to show (default \(defaultMaxItems))."),
        OptionSpec(name: "timeout", valueName: "seconds", help: "Wall-clock limit for the whole session."),
        OptionSpec(name: "max-writes", valueName: "n", help: "With --apply: stop before the first write past n."),
        OptionSpec(name: "lib", valueName: "dir", help: "Add a folder that require() may load modules from.", repeatable: true),
    ] + OutputOptions.specs + CommonOptions.specs

    static let defaultMaxItems = 20

    /// How eval and repl decide what a session may call (shown in both commands' help).
    static let gateDiscussion = """
        Reads are live: a read the profile may not make is refused by the Hub. Writes are
        planned: each is recorded and shown, and nothing is sent, unless --apply is given;
        then each write is checked against the profile's permissions (as a recipe's needs
        are) before it is sent, and journalled. The session runs as a recipe does: in the
        sandbox, under the run limits (memory, timeout), recorded in the journal.
        vault.secret and named Dispatch targets are not available (no manifest declares them).
        """

    /// Makes `launcher` (from `RunCommand.launcher`) run `session`: its driver recipe
    /// instead of a file, its writes planned unless `--apply`, `ReplGate` as the gate.
    ///
    /// The driver is named as if in the working folder (`(eval)`, `(repl)` in run
    /// listings), where `require` looks first. In a pinned library's folder it is placed
    /// in `repl/` of the state folder instead (no file of a session is one of the
    /// library's files), and the working folder is searched first all the same.
    static func configure(_ launcher: inout RecipeLauncher, session: ReplSession) throws {
        let here = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
        if isInsideLibrary(here, launcher.request.libraries) {
            let folder = URL(fileURLWithPath: try launcher.common.state.folderPath("repl"), isDirectory: true)
            launcher.prepared = try ReplDriver.recipe(folder: folder, mode: session.mode)
            launcher.request.libraryFolders.insert(here, at: 0)
        } else {
            launcher.prepared = try ReplDriver.recipe(folder: here, mode: session.mode)
        }
        launcher.request.mode = session.applying ? .run : .plan
        launcher.bindingGate = { [applying = session.applying] connection in ReplGate.make(applying: applying, connection: connection) }
        launcher.request.extraPlugins = { environment in [session.plugin(environment)] }
    }

    /// Whether `folder` is one of `libraries`' folders or inside one.
    static func isInsideLibrary(_ folder: URL, _ libraries: [ModuleLibrary]) -> Bool {
        let path = folder.standardizedFileURL.resolvingSymlinksInPath().path
        return libraries.contains { library in
            let root = library.folder.standardizedFileURL.resolvingSymlinksInPath().path
            return path == root || path.hasPrefix(root + "/")
        }
    }

    static func maxItems(_ arguments: ParsedArguments) throws -> Int {
        guard let text = arguments.value("max-items") else { return defaultMaxItems }
        guard let n = Int(text), n > 0 else { throw UsageError("--max-items takes a positive whole number, got '\(text)'") }
        return n
    }

    /// The plan of a session that planned writes: the table, on stderr (or a `plan` event).
    static func showPlan(json: Bool, mode: ReplSession.Mode) -> (Plan, SecretRedactor, ConsoleOutput, PlanMaking) throws -> Void {
        return { plan, _, output, _ in
            guard !plan.writes.isEmpty else { return }
            if json {
                output.event("plan", ["plan": plan.jsonValue()])
            } else {
                output.writeStderr(PlanTable.render(plan))
                output.writeStderr(mode == .eval ? "to send them, run the same hubscript eval with --apply\n"
                                                 : "to send writes, start the session with hubscript repl --apply\n")
            }
        }
    }
}
