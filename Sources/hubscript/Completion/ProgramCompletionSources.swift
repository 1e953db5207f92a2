import Foundation
import ShellCompletion
import SystemText
import Configuration
import HubClient
import RunJournal
import ScriptHost

/// The names completion offers, read from what exists now: the configuration (as every
/// command finds it, `--config` first), `hubscript.lock`, the journal, a recipe's
/// manifest. Nothing is written, fetched, created or asked for; what cannot be read
/// gives no names.
final class ProgramCompletionSources: CompletionSources {
    private let environment: [String: String]
    private var configurations: [String: LoadedConfiguration?] = [:]

    init(environment: [String: String] = ProcessEnvironment.all) {
        self.environment = environment
    }

    /// `~/…` as the shell would expand it (completion sees words as typed).
    private func expanded(_ path: String?) -> String? {
        guard let path, path.hasPrefix("~/"), let home = environment["HOME"], !home.isEmpty else { return path }
        return home + path.dropFirst()
    }

    private func configuration(_ context: CompletionContext) -> LoadedConfiguration? {
        let key = context.config ?? ""
        if let loaded = configurations[key] { return loaded }
        let loaded = try? LoadedConfiguration.load(explicit: expanded(context.config), environment: environment)
        configurations[key] = loaded
        return loaded
    }

    private func state(_ context: CompletionContext) -> StateDirectory {
        let variable = environment["HUBSCRIPT_STATE_DIR"].flatMap { $0.isEmpty ? nil : $0 }
        return StateDirectory(explicit: expanded(context.stateDirectory) ?? variable, environment: environment)
    }

    func profiles(_ context: CompletionContext) -> [String] {
        (configuration(context).map { Array($0.hub.profiles.keys) } ?? []) + [HubConfig.builtinSandboxName]
    }

    func jobs(_ context: CompletionContext) -> [String] {
        configuration(context)?.jobs.jobs.map(\.name) ?? []
    }

    func runIDs(_ context: CompletionContext) -> [String] {
        // A configuration that does not load may name another journal: no ids then.
        guard let configuration = configuration(context) else { return [] }
        let location: JournalLocation
        if let journal = configuration.journal {
            location = .postgres(journal)
        } else {
            // The path the journal would have, without creating its folder.
            location = .sqlite(path: StateDirectory.join(StateDirectory.join(state(context).path, "journal"), "journal.sqlite"))
        }
        return RecentRunIDs.read(location, limit: Completer.maxRunIDs)
    }

    func libraryRecipes(_ context: CompletionContext) -> [String] {
        configuration(context)?.pinnedRecipeNames(state: state(context)) ?? []
    }

    func libraries(_ context: CompletionContext) -> [String] {
        configuration(context)?.libraryNames ?? []
    }

    /// Whether `path` is a regular file (links followed). Completion reads no device,
    /// FIFO or terminal: `/dev/stdin` at a prompt is the terminal the person types on,
    /// and reading it would hold the Tab until they type.
    static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    func parameters(_ context: CompletionContext) -> [CompletionParameter] {
        guard let recipe = expanded(context.recipe) else { return [] }
        var path = recipe
        if !FileManager.default.fileExists(atPath: recipe), let reference = LibraryRecipe.reference(recipe) {
            guard let file = configuration(context)?.existingRecipeFile(reference, state: state(context)) else { return [] }
            path = file.path
        }
        guard Self.isRegularFile(path), let file = try? RecipeFile(path: path), let manifest = try? RecipeManifest.load(from: file) else { return [] }
        return manifest.params.map { param in
            CompletionParameter(name: param.name, values: param.kind == .boolean ? ["true", "false"] : [])
        }
    }
}
