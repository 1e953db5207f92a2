import Foundation
import ScriptHost

/// `hubscript-bench calls FILE` (scripts/bench-runtime): runs the Lua file FILE in
/// hubscript's runtime (`ScriptRuntime`, the same VM, limits hook and binding
/// trampoline a recipe gets) with the `bench` module installed, its output on the
/// console. The module lives here, not in the product: the binary users run has no
/// benchmark hook to switch on.
enum CallsBench {
    static func run(_ path: String) -> Int32 {
        let recipe: RecipeFile
        do { recipe = try RecipeFile(path: path) } catch {
            FileHandle.standardError.write(Data("hubscript-bench calls: \(error)\n".utf8))
            return 2
        }
        var configuration = RunConfiguration(output: ConsoleOutput(json: false))
        configuration.plugins = [BenchPlugin.make()]
        let report = ScriptRuntime.run(recipe, configuration: configuration)
        if let failure = report.failure {
            FileHandle.standardError.write(Data("hubscript-bench calls: \(failure.message)\n".utf8))
            return 1
        }
        return 0
    }
}
