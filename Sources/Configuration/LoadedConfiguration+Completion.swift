import Foundation
import HubClient
import ScriptHost

/// What shell completion reads of the libraries: names and files already on disk, read
/// without fetching a git library, creating a state folder or writing anything.
extension LoadedConfiguration {
    /// The library folders that exist now: a folder library's folder, a git library's
    /// checkout if it was fetched before.
    func existingLibraryFolders(state: StateDirectory) -> [ModuleLibrary] {
        guard let file else { return [] }
        let base = file.deletingLastPathComponent()
        let libraries = URL(fileURLWithPath: StateDirectory.join(state.path, "libraries"), isDirectory: true)
        return libraryDeclarations.compactMap { declaration in
            let folder: URL
            if let git = declaration.git {
                folder = GitCheckout.folder(of: git, libraries: libraries)
            } else {
                folder = declaration.path.hasPrefix("/") ? URL(fileURLWithPath: declaration.path, isDirectory: true)
                    : base.appendingPathComponent(declaration.path, isDirectory: true)
            }
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder), isFolder.boolValue else { return nil }
            return ModuleLibrary(name: declaration.name, folder: folder.standardizedFileURL.resolvingSymlinksInPath())
        }
    }

    /// The `LIB:RECIPE` names of the recipes pinned in `hubscript.lock` (the ones
    /// `hubscript LIB:RECIPE` runs), sorted; none without a configuration, libraries or
    /// lock. A pinned file is a recipe when its file opens with a manifest, or, when its
    /// library is not on disk, when its pin records what a manifest asks for.
    public func pinnedRecipeNames(state: StateDirectory) -> [String] {
        guard let file, !libraryDeclarations.isEmpty,
              let lock = try? LibraryLock.read(LibraryLock.url(besideConfig: file)) else { return [] }
        let folders = Dictionary(existingLibraryFolders(state: state).map { ($0.name, $0.folder) }) { a, _ in a }
        let names = Set(libraryNames)
        var recipes: [String] = []
        for (path, pin) in lock.pins {
            guard let slash = path.firstIndex(of: "/") else { continue }
            let library = String(path[..<slash]), relative = String(path[path.index(after: slash)...])
            let fileName = relative.split(separator: "/").last.map(String.init) ?? relative
            guard names.contains(library), relative.hasSuffix(".lua"), !fileName.hasSuffix("_test.lua"),
                  fileName != "init.lua" else { continue }
            let isRecipe: Bool
            if let folder = folders[library] {
                isRecipe = LibraryRecipe.opensWithAManifest(folder.appendingPathComponent(relative))
            } else {
                isRecipe = !(pin.needs.isEmpty && pin.secrets.isEmpty && pin.targets.isEmpty && pin.limits.isEmpty)
            }
            guard isRecipe else { continue }
            recipes.append(library + ":" + String(relative.dropLast(4)).replacingOccurrences(of: "/", with: "."))
        }
        return recipes.sorted()
    }

    /// The file of library recipe `reference` when its library is on disk now (a git
    /// library is never fetched for this); nil otherwise.
    public func existingRecipeFile(_ reference: (library: String, recipe: String), state: StateDirectory) -> URL? {
        guard let library = existingLibraryFolders(state: state).first(where: { $0.name == reference.library }) else { return nil }
        let url = library.folder.appendingPathComponent(reference.recipe.replacingOccurrences(of: ".", with: "/") + ".lua")
        return FileManager.default.fileExists(atPath: url.path) ? url : nil
    }
}
