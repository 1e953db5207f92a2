import Foundation
import SystemText
import HTTPKit
import HubClient
import ScriptHost
import RunJournal
import RecipeModules

/// `hubscript docs modules`: the module reference as Markdown (docs/modules.md).
/// `hubscript docs luals [--out DIR]`: the same registry as lua-language-server
/// definitions (`---@meta` files), for editors.
struct DocsCommand: Command {
    static let configuration = CommandConfiguration(
        name: "docs",
        abstract: "Print reference documentation generated from the code.",
        usage: "modules | luals [--out DIR]",
        options: [OptionSpec(name: "out", valueName: "dir",
                             help: "luals: write the definition files into DIR (created if missing; its files of the same names are replaced).")],
        discussion: """
        'modules' prints the reference of every module a recipe can use (docs/modules.md).
        'luals' prints lua-language-server definitions (---@meta) of the same modules, their
        functions, parameters and return values, the Hub objects' fields and the globals, as
        one file on stdout; with --out DIR it writes one file per module into DIR instead
        (hubscript new points a recipe folder's .luarc.json at .hubscript/luals).
        """)

    enum Page: String { case modules, luals }
    let page: Page
    let outFolder: String?

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.count == 1, let page = Page(rawValue: arguments.positionals[0]) else {
            throw UsageError("expected 'modules' or 'luals'")
        }
        self.page = page
        outFolder = arguments.value("out")
        if outFolder != nil, page != .luals { throw UsageError("--out goes with 'luals' only") }
        if let outFolder, outFolder.isEmpty { throw UsageError("--out needs a folder") }
    }

    func run() throws -> Int32 {
        let plugins = try BuiltinPlugins.documented()
        switch page {
        case .modules:
            Console.out(ModuleReference.markdown(plugins: plugins))
        case .luals:
            let files = LuaLSDefinitions.files(plugins: plugins)
            if let outFolder {
                try LuaLSDefinitions.write(files, into: URL(fileURLWithPath: outFolder))
                Console.out("wrote \(files.count) definition files into \(outFolder)\n")
            } else {
                Console.out(LuaLSDefinitions.singleFile(files))
            }
        }
        return ExitCode.success
    }
}

/// The modules every run installs, as documented. Their declarations need a run's
/// objects, so documentation uses throwaway ones (nothing is called). The functions
/// a module's Lua wrapper adds (not Swift bindings) are listed too, with a body that
/// is never called, so the reference, the editor definitions and `check` know them.
enum BuiltinPlugins {
    static func documented() throws -> [Plugin] {
        let client = try HubClient(baseURL: URL(string: "http://localhost")!, credential: .none,
                                   transport: InProcessTransport(handler: { _ in HTTPResponseMessage(status: 503) }))
        let journal = try Journal.inMemory()
        let coordinator = WriteCoordinator(runID: "docs", mode: .plan, journal: journal, writeLimit: nil, masking: SecretRedactor())
        let context = HubRunContext(client: client, writes: coordinator)
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("hubscript-docs")
        let plugins = [
            JSONPlugin.make(), LogPlugin.make(output: MemoryOutput()), ParamsPlugin.make([:]), TimePlugin.make(),
            HubModule.make(context),
            ExportPlugin.make(session: ExportSession(folder: scratch, masking: SecretRedactor())), CSVPlugin.make(allowedFiles: []),
            ProgressPlugin.make(reporter: MemoryProgressReporter()),
            StatePlugin.make(context: context, journal: journal, scope: "docs"),
            DispatchPlugin.documented,
            VaultPlugin.make(declared: [], secrets: nil),
        ]
        return plugins.map { plugin in
            guard let extra = wrapperFunctions[plugin.module] else { return plugin }
            return Plugin(module: plugin.module, summary: plugin.summary, functions: plugin.functions + extra,
                          values: plugin.values, luaWrapper: plugin.luaWrapper)
        }
    }

    /// Functions a module's Lua wrapper defines, by module.
    static let wrapperFunctions: [String: [ScriptFunction]] = [
        "json": [
            documentation("isnull", "json.isnull(v) -> true only for json.null"),
            documentation("array", "json.array(t) -> the table t, marked as an array (an empty one encodes as `[]`)"),
        ],
        "hub": [
            documentation("sessions.revoke_all", capability: "users.manage", writes: true,
                          "hub.sessions.revoke_all(user_id) -> how many live sessions it revoked (lists with users.list, revokes each)"),
        ],
    ]

    private static func documentation(_ name: String, capability: String? = nil, writes: Bool = false,
                                      _ summary: String) -> ScriptFunction {
        ScriptFunction(name, capability: capability, writes: writes, summary: summary) { _ in
            throw ScriptLimitError("\(name) is documentation only")
        }
    }
}
