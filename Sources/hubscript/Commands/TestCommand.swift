import Foundation
import HubClient
import ScriptHost
import Configuration

/// `hubscript test [PATH…]`: runs recipe tests (`*_test.lua`) against fresh built-in sandboxes.
struct TestCommand: Command {
    static let configuration = CommandConfiguration(
        name: "test",
        abstract: "Run recipe tests (*_test.lua) against fresh in-memory sandboxes.",
        usage: "[PATH…] [--json] [--config FILE] [--state-dir DIR]",
        options: [OptionSpec(name: "json", valueName: nil,
                             help: "One JSON object a test case (type \"test\"), then a summary, on stdout.")]
            + CommonOptions.specs.dropFirst(),
        discussion: """
        Runs every *_test.lua file named, or found in the folders named (recursively;
        default: the current folder). A test file is Lua with the recipe sandbox's rules
        and two more globals: test (test.case, test.sandbox) and expect. Each
        test.sandbox{…} is a fresh in-memory built-in Hub and Dispatch with its own
        journal; s:run("recipe.lua", params, {mode = …}) runs a recipe against it as
        hubscript run does. Reference: docs/recipe-tests.md.

        A test runs recipes and reads file parameters only in its own folder (or, for
        a test inside a library, that library), and no connection leaves the process.
        The configuration's libraries (git ones fetched into the state folder) are
        searched by require, in the test files and in the recipes they run, each
        module checked against hubscript.lock as in a run.

        Prints one line per case (ok or FAIL, with the failure's message and the test's
        file:line), then "N passed, N failed". Exits 0 if every case passed, 1 if any
        failed (or a test file could not run), 2 on a usage error or when no test file
        is found.
        """)

    let paths: [String]
    let json: Bool
    let libraries: [ModuleLibrary]

    init(_ arguments: ParsedArguments) throws {
        paths = arguments.positionals.isEmpty ? ["."] : arguments.positionals
        json = arguments.flag("json")
        libraries = try LoadedConfiguration.load(explicit: arguments.value("config"))
            .libraries(state: CommonOptions.stateDirectory(arguments))
    }

    func run() throws -> Int32 {
        let files = try TestRunner.files(in: paths)
        guard !files.isEmpty else {
            throw UsageError("no *_test.lua files in \(paths.joined(separator: ", "))")
        }
        let scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("hubscript-test-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let state = StateDirectory(explicit: scratch.path)
        let output = json ? ConsoleOutput(json: true, timestamps: true) : nil
        var passed = 0, failed = 0
        for file in files {
            let shownFile = TerminalText.field(file)
            let (cases, error) = TestRunner.run(file: file, state: state, libraries: libraries) { result in
                if let output {
                    output.event("test", ["file": .string(result.file), "name": .string(result.name), "ok": .bool(result.ok),
                                          "message": result.message.map(ScriptValue.string) ?? .null])
                } else if result.ok {
                    Console.out("\(Styled.ok) \(shownFile): \(TerminalText.field(result.name))\n")
                } else {
                    Console.out("\(Styled.fail) \(shownFile): \(TerminalText.field(result.name))\n     "
                        + TerminalText.text(result.message ?? "").replacingOccurrences(of: "\n", with: "\n     ") + "\n")
                }
            }
            passed += cases.filter(\.ok).count
            failed += cases.filter { !$0.ok }.count
            if let error {
                failed += 1
                if let output {
                    output.event("test", ["file": .string(file), "name": .null, "ok": .bool(false), "message": .string(error)])
                } else {
                    Console.out("\(Styled.fail) \(shownFile)\n     "
                        + TerminalText.text(error).replacingOccurrences(of: "\n", with: "\n     ") + "\n")
                }
            }
        }
        let code = failed == 0 ? ExitCode.success : ExitCode.recipeFailed
        if let output {
            var summary = JSONEvents.summary(status: failed == 0 ? "ok" : "failed", exitCode: code, runID: nil)
            summary["passed"] = .integer(Int64(passed))
            summary["failed_tests"] = .integer(Int64(failed))
            summary["files"] = .integer(Int64(files.count))
            output.event("summary", summary)
        } else {
            Console.out("\(passed) passed, \(failed) failed\n")
        }
        return code
    }
}
