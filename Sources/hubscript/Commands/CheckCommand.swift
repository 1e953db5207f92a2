import Foundation
import ScriptHost

/// `hubscript check FILE…`: syntax and manifest of each file, without running any.
struct CheckCommand: Command {
    static let configuration = CommandConfiguration(
        name: "check",
        abstract: "Check recipes' syntax and manifests without running them.",
        usage: "FILE…",
        discussion: "Prints one line per file. Exits 1 if any file fails, 0 if all pass.")

    let paths: [String]

    init(_ arguments: ParsedArguments) throws {
        guard !arguments.positionals.isEmpty else { throw UsageError("missing the recipe FILE(s) to check") }
        paths = arguments.positionals
    }

    func run() throws -> Int32 {
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
