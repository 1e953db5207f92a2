import Foundation
import ScriptHost

/// `hubscript eval 'EXPR'`: one chunk run with the recipe modules, its values printed
/// as JSON (`hubscript eval 'hub.users.get("ada@example.com")'` prints the user).
struct EvalCommand: Command {
    static let configuration = CommandConfiguration(
        name: "eval",
        abstract: "Run one Lua expression or statement with the recipe modules; print its value as JSON.",
        usage: "'EXPR' [--profile P] [--json] [--apply] [--max-items N]",
        options: ReplLaunch.options + [
            OptionSpec(name: "json", valueName: nil, help: "Write NDJSON events: a `value` event per value, then the summary."),
        ],
        discussion: """
        An expression prints its values as JSON on stdout (a lazy hub list: its first
        --max-items items, and a note on stderr if it has more); a statement prints what
        it prints. \(ReplLaunch.gateDiscussion)

        Exit codes as for run: 0 success, 1 the chunk failed (a write the profile may not
        make included), 2 usage or configuration error or a chunk that does not compile
        (nothing runs), 4 a limit stopped it.
        """)

    let launcher: RecipeLauncher
    /// Why the chunk does not compile (as an expression nor as statements), if it does not.
    let syntaxError: String?

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.count == 1 else {
            throw UsageError(arguments.positionals.isEmpty ? "expected an expression, e.g. hubscript eval 'hub.users.list{}'"
                : "expected one expression (quote it as one argument)")
        }
        let chunk = arguments.positionals[0]
        guard !chunk.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { throw UsageError("the expression is empty") }
        syntaxError = Self.syntaxError(in: chunk)
        var launcher = try RunCommand.launcher(arguments)
        let session = ReplSession(mode: .eval, input: FixedInput([chunk]), json: launcher.json,
                                  applying: arguments.flag("apply"), maxItems: try ReplLaunch.maxItems(arguments))
        try ReplLaunch.configure(&launcher, session: session)
        // stdout holds the values; the run's start and closing lines are for --verbose.
        if !arguments.flag("verbose") {
            launcher.chatter.quiet = true
            launcher.closingLine = false
        }
        self.launcher = launcher
    }

    func run() throws -> Int32 {
        // A chunk that does not compile is refused before anything connects, as run
        // refuses a recipe that does not load (exit 2).
        if let syntaxError { return JSONEvents.refuse(syntaxError, json: launcher.json) }
        return launcher.launch(path: "(eval)", params: [], paramsFile: nil, onPlan: ReplLaunch.showPlan(json: launcher.json, mode: .eval))
    }

    /// The compiler's message for `chunk` as statements when it is not an expression
    /// either (lua.c's order), named `eval` as the session names it: nil if it compiles.
    static func syntaxError(in chunk: String) -> String? {
        func compile(_ source: String) -> String? {
            ScriptRuntime.syntaxError(in: RecipeFile(displayPath: "eval", url: URL(fileURLWithPath: "/eval"), source: source))
        }
        guard compile("return " + chunk) != nil else { return nil }
        return compile(chunk)
    }
}
