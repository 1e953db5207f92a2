import Foundation
import ScriptHost

/// `hubscript docs modules`: the module reference as Markdown (docs/modules.md).
struct DocsCommand: Command {
    static let configuration = CommandConfiguration(
        name: "docs",
        abstract: "Print reference documentation generated from the code.",
        usage: "modules",
        discussion: "'modules' prints the reference of every module a recipe can use (docs/modules.md).")

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals == ["modules"] else { throw UsageError("expected 'modules'") }
    }

    func run() throws -> Int32 {
        Console.out(ModuleReference.markdown(plugins: BuiltinPlugins.documented))
        return ExitCode.success
    }
}

/// The modules every run installs, as documented (params is per run, shown empty).
enum BuiltinPlugins {
    static var documented: [Plugin] {
        [JSONPlugin.make(), LogPlugin.make(output: MemoryOutput()), ParamsPlugin.make([:])]
    }
}
