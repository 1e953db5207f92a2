import Foundation
import HubBindings
import ScriptHost

/// `hubscript check FILE…`: syntax and manifest of each file, without running any.
struct CheckCommand: Command {
    static let configuration = CommandConfiguration(
        name: "check",
        abstract: "Check recipes' syntax and manifests without running them.",
        usage: "FILE… [--json]",
        options: [OptionSpec(name: "json", valueName: nil, help: "One JSON object a file (type \"check\"), then a summary, on stdout.")],
        discussion: "Prints one line per file. Exits 1 if any file fails, 0 if all pass.")

    let paths: [String]
    let json: Bool

    init(_ arguments: ParsedArguments) throws {
        guard !arguments.positionals.isEmpty else { throw UsageError("missing the recipe FILE(s) to check") }
        paths = arguments.positionals
        json = arguments.flag("json")
    }

    func run() throws -> Int32 {
        if json { return runJSON() }
        var failures = 0
        for path in paths {
            // The problem quotes the recipe (syntax errors, manifest values): escaped, its
            // lines indented under the file's, so it cannot pass for another file's line.
            let shownPath = TerminalText.field(path)
            if let problem = Self.problem(in: path) {
                failures += 1
                Console.out("FAIL \(shownPath)\n     \(TerminalText.text(problem).replacingOccurrences(of: "\n", with: "\n     "))\n")
            } else {
                Console.out("ok   \(shownPath)\n")
            }
        }
        if paths.count > 1 {
            Console.out("\(paths.count - failures) passed, \(failures) failed\n")
        }
        return failures == 0 ? ExitCode.success : ExitCode.recipeFailed
    }

    /// `--json`: a `check` event per file (`file`, `ok`, `problem` when it fails), then
    /// a `summary` with `passed`, `failed` and `exit_code`.
    func runJSON() -> Int32 {
        let output = ConsoleOutput(json: true, timestamps: true)
        var failures = 0
        for path in paths {
            let problem = Self.problem(in: path)
            if problem != nil { failures += 1 }
            output.event("check", ["file": .string(path), "ok": .bool(problem == nil), "problem": problem.map(ScriptValue.string) ?? .null])
        }
        let code = failures == 0 ? ExitCode.success : ExitCode.recipeFailed
        var summary = JSONEvents.summary(status: failures == 0 ? "ok" : "failed", exitCode: code, runID: nil)
        summary["passed"] = .integer(Int64(paths.count - failures))
        summary["failed_files"] = .integer(Int64(failures))
        output.event("summary", summary)
        return code
    }

    static func problem(in path: String) -> String? {
        do {
            let file = try RecipeFile(path: path)
            if let syntax = ScriptRuntime.syntaxError(in: file) { return syntax }
            _ = try RecipeManifest.load(from: file)
            return nil
        } catch {
            return "\(error)"
        }
    }
}
