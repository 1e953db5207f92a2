import Foundation
import SystemText
import HTTPKit
import HubClient
import ScriptHost
import RunJournal
import RecipeModules

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
        Console.out(ModuleReference.markdown(plugins: try BuiltinPlugins.documented()))
        return ExitCode.success
    }
}

/// The modules every run installs, as documented. Their declarations need a run's
/// objects, so documentation uses throwaway ones (nothing is called).
enum BuiltinPlugins {
    static func documented() throws -> [Plugin] {
        let client = try HubClient(baseURL: URL(string: "http://localhost")!, credential: .none,
                                   transport: InProcessTransport(handler: { _ in HTTPResponseMessage(status: 503) }))
        let coordinator = WriteCoordinator(runID: "docs", mode: .plan, journal: try Journal.inMemory(), writeLimit: nil, masking: SecretRedactor())
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("hubscript-docs")
        return [
            JSONPlugin.make(), LogPlugin.make(output: MemoryOutput()), ParamsPlugin.make([:]), TimePlugin.make(),
            HubModule.make(HubRunContext(client: client, writes: coordinator)),
            ExportPlugin.make(session: ExportSession(folder: scratch, masking: SecretRedactor())), CSVPlugin.make(allowedFiles: []),
            ProgressPlugin.make(reporter: MemoryProgressReporter()),
            DispatchPlugin.documented,
        ]
    }
}
