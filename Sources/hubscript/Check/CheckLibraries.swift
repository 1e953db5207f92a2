import Foundation
import ScriptHost
import Configuration

/// The configuration's libraries for `check`: read only when a `LIB:RECIPE` names a
/// library recipe or a required module is in no folder, and then once.
final class CheckLibraries {
    private let arguments: ParsedArguments
    private var loaded: [ModuleLibrary]?

    init(_ arguments: ParsedArguments) {
        self.arguments = arguments
    }

    /// The path of `written`: itself when it is a file, else the file of `LIB:RECIPE`.
    /// - Throws: a `UsageError` for an unknown library or recipe, or a configuration that cannot be read.
    func resolve(_ written: String) throws -> String {
        guard !FileManager.default.fileExists(atPath: written), LibraryRecipe.reference(written) != nil else { return written }
        return try RecipeHelp.resolve(written, libraries: try libraries())
    }

    /// The libraries, or none when the configuration cannot be read (a module that is
    /// then not found is reported as such).
    func modules() -> [ModuleLibrary] {
        (try? libraries()) ?? []
    }

    private func libraries() throws -> [ModuleLibrary] {
        if let loaded { return loaded }
        let configuration = try LoadedConfiguration.load(explicit: arguments.value("config"))
        let libraries = try configuration.unpinnedLibraries(state: CommonOptions.stateDirectory(arguments))?.libraries ?? []
        loaded = libraries
        return libraries
    }
}
