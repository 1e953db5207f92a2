import Foundation
import ScriptHost

/// `hubscript run FILE`: validates the manifest and params, then runs the recipe.
struct RunCommand: Command {
    static let configuration = CommandConfiguration(
        name: "run",
        abstract: "Run a recipe.",
        usage: "FILE [--param name=value]… [--params-file F.json] [--json] [--timeout S]",
        options: [
            OptionSpec(name: "param", valueName: "name=value", help: "Set a recipe parameter.", repeatable: true),
            OptionSpec(name: "params-file", valueName: "file", help: "Read parameters from a JSON object."),
            OptionSpec(name: "json", valueName: nil, help: "Write NDJSON events (prints, logs, summary) to stdout."),
            OptionSpec(name: "timeout", valueName: "seconds", help: "Wall-clock limit for the run (overrides the manifest)."),
            OptionSpec(name: "lib", valueName: "dir", help: "Add a folder that require() may load modules from.", repeatable: true),
        ],
        discussion: """
        Exit codes: 0 success, 1 the recipe failed, 2 usage or configuration error
        (including a manifest or parameter problem: nothing of the recipe runs),
        3 capability denied, 4 a limit stopped the run.
        """)

    let path: String
    let params: [(String, String)]
    let paramsFile: String?
    let json: Bool
    let timeout: Double?
    let libraries: [URL]

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.count == 1 else {
            throw UsageError(arguments.positionals.isEmpty ? "missing the recipe FILE" : "expected one recipe FILE, got \(arguments.positionals.count)")
        }
        path = arguments.positionals[0]
        do { params = try PreparedRecipe.parseParamArguments(arguments.all("param")) } catch {
            throw UsageError("\(error)")
        }
        paramsFile = arguments.value("params-file")
        json = arguments.flag("json")
        if let t = arguments.value("timeout") {
            guard let seconds = Double(t), seconds > 0, seconds.isFinite else {
                throw UsageError("--timeout takes a positive number of seconds, got '\(t)'")
            }
            timeout = seconds
        } else {
            timeout = nil
        }
        libraries = arguments.all("lib").map { URL(fileURLWithPath: $0) }
    }

    func run() throws -> Int32 {
        let output = ConsoleOutput(json: json)
        let prepared: PreparedRecipe
        do { prepared = try PreparedRecipe(path: path, cliParams: params, paramsFile: paramsFile) } catch {
            return RunReporter(output: output, json: json).reportSetupFailure(error)
        }
        var configuration = RunConfiguration(output: output)
        configuration.limits = prepared.manifest.limits.applied(to: RunLimits())
        if let timeout { configuration.limits.timeoutSeconds = timeout }
        configuration.libraryFolders = libraries
        configuration.plugins = [
            JSONPlugin.make(), LogPlugin.make(output: output), ParamsPlugin.make(prepared.params.values),
        ]
        if ProcessInfo.processInfo.environment["HUBSCRIPT_BENCH_PLUGIN"] == "1" {
            configuration.plugins.append(BenchPlugin.make())
        }
        let reporter = RunReporter(output: output, json: json)
        configuration.onWatchdog = { failure in
            reporter.report(failure: failure)
            output.flush()
            _exit(ExitCode.limit)
        }
        let report = ScriptRuntime.run(prepared.file, configuration: configuration)
        return reporter.finish(report)
    }
}
