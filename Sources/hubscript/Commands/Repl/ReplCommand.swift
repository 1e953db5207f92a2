import Foundation
import ScriptHost

/// `hubscript repl`: an interactive Lua prompt with the recipe modules, one session (one
/// Lua state) across lines. On a terminal: line editing, history, Tab completion; from a
/// pipe: plain lines, no prompt.
struct ReplCommand: Command {
    static let configuration = CommandConfiguration(
        name: "repl",
        abstract: "An interactive Lua prompt with the recipe modules: reads live, writes planned.",
        usage: "[--profile P] [--apply] [--max-items N]",
        options: ReplLaunch.options,
        discussion: """
        Each expression shows its values as JSON; `x = 1` keeps x for the next lines (a
        local lasts for its line); an unfinished chunk continues on the next line. Errors
        are shown and the session goes on. :help lists the commands; :quit or Ctrl-D ends.
        \(ReplLaunch.gateDiscussion)
        The session's timeout is 24 hours unless --timeout says otherwise. On a terminal the
        history is kept in repl/history in the state folder (0600, secrets masked).
        """)

    let launcher: RecipeLauncher

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.isEmpty else { throw UsageError("repl takes no arguments (did you mean hubscript eval?)") }
        var launcher = try RunCommand.launcher(arguments)
        let input: any ReplInput
        let onATerminal = isatty(0) == 1 && isatty(1) == 1 && ProcessInfo.processInfo.environment["TERM"] != "dumb"
        if onATerminal {
            let history = try? launcher.common.state.folderPath("repl") + "/history"
            let completion = ReplCompletion.standard(plugins: (try? BuiltinPlugins.documented()) ?? [])
            input = EditedInput(LineEditor(historyFile: history, completion: completion))
        } else {
            input = PlainLineInput()
        }
        let session = ReplSession(mode: .repl, input: input, json: false, applying: arguments.flag("apply"),
                                  maxItems: try ReplLaunch.maxItems(arguments), greets: onATerminal)
        try ReplLaunch.configure(&launcher, session: session)
        if launcher.request.timeout == nil { launcher.request.timeout = RunLimits.hostCeiling.timeoutSeconds }
        self.launcher = launcher
    }

    func run() throws -> Int32 {
        launcher.launch(path: "(repl)", params: [], paramsFile: nil, onPlan: ReplLaunch.showPlan(json: false, mode: .repl))
    }
}
