import Foundation
import ScriptHost

/// `hubscript check FILE…`: syntax and manifest of each file, without running any.
struct CheckCommand: Command {
    static let configuration = CommandConfiguration(
        name: "check",
        abstract: "Check recipes' syntax and manifests without running them.",
        usage: "FILE… [--json] | --config [FILE] [--json]",
        options: [OptionSpec(name: "json", valueName: nil, help: "One JSON object a file (type \"check\"), then a summary, on stdout.")]
            + ConfigCheckRun.checkOptions,
        discussion: """
        Prints one line per file. Exits 0 if all pass, 2 if a manifest's needs names an
        unknown permission, 1 if any file fails otherwise.

        With --config, checks the configuration's jobs and triggers instead, as
        'hubscript jobs check' does (see its --help).
        """)

    let paths: [String]
    let json: Bool
    /// `--config`: the configuration's jobs and triggers are checked instead (`jobs check`).
    var configCheck: ConfigCheckRun?

    init(_ arguments: ParsedArguments) throws {
        if let check = try ConfigCheckRun(checkArguments: arguments) {
            (configCheck, paths, json) = (check, [], check.json)
            return
        }
        guard !arguments.positionals.isEmpty else { throw UsageError("missing the recipe FILE(s) to check") }
        paths = arguments.positionals
        json = arguments.flag("json")
    }

    func run() throws -> Int32 {
        if let configCheck { return try configCheck.run() }
        if json { return runJSON() }
        var failures = 0
        var unknownPermissions = false
        for path in paths {
            // The problem quotes the recipe (syntax errors, manifest values): escaped, its
            // lines indented under the file's, so it cannot pass for another file's line.
            let shownPath = TerminalText.field(path)
            if let (problem, isUnknownPermission) = Self.problem(in: path) {
                failures += 1
                unknownPermissions = unknownPermissions || isUnknownPermission
                Console.out("\(Styled.fail) \(shownPath)\n     \(TerminalText.text(problem).replacingOccurrences(of: "\n", with: "\n     "))\n")
            } else {
                Console.out("\(Styled.ok) \(shownPath)\n")
            }
        }
        if paths.count > 1 {
            Console.out("\(paths.count - failures) passed, \(failures) failed\n")
        }
        if unknownPermissions { return ExitCode.usage }
        return failures == 0 ? ExitCode.success : ExitCode.recipeFailed
    }

    /// `--json`: a `check` event per file (`file`, `ok`, `problem` when it fails), then
    /// a `summary` with `passed`, `failed` and `exit_code`.
    func runJSON() -> Int32 {
        let output = ConsoleOutput(json: true, timestamps: true)
        var failures = 0
        var unknownPermissions = false
        for path in paths {
            let problem = Self.problem(in: path)
            if let problem {
                failures += 1
                unknownPermissions = unknownPermissions || problem.1
            }
            output.event("check", ["file": .string(path), "ok": .bool(problem == nil), "problem": problem.map { .string($0.0) } ?? .null])
        }
        let code = unknownPermissions ? ExitCode.usage : failures == 0 ? ExitCode.success : ExitCode.recipeFailed
        var summary = JSONEvents.summary(status: failures == 0 ? "ok" : "failed", exitCode: code, runID: nil)
        summary["passed"] = .integer(Int64(paths.count - failures))
        summary["failed_files"] = .integer(Int64(failures))
        output.event("summary", summary)
        return code
    }

    /// What is wrong with the file, and whether it is an unknown permission in `needs`.
    static func problem(in path: String) -> (String, Bool)? {
        do {
            let file = try RecipeFile(path: path)
            if let syntax = ScriptRuntime.syntaxError(in: file) { return (syntax, false) }
            // A recipe test (docs/recipe-tests.md) has no manifest: its syntax is all there is to check.
            if path.hasSuffix("_test.lua") { return nil }
            let manifest = try RecipeManifest.load(from: file)
            return NeedsCheck.problem(in: file, manifest: manifest).map { ($0, true) }
        } catch {
            return ("\(error)", false)
        }
    }
}
