import Foundation
import HubClient
import ScriptHost

/// Recipes kept in a library: `hubscript ops:offboard` runs `offboard.lua` of library
/// `ops` (`ops:users.offboard`: `users/offboard.lua`), pinned like every library file.
public enum LibraryRecipe {
    /// A recipe named `LIB:RECIPE` (a job's or a trigger's `recipe`), found when it runs.
    public struct Name: Sendable, Equatable, CustomStringConvertible {
        public let library: String
        public let recipe: String
        public var description: String { "\(library):\(recipe)" }
    }

    /// `text` as a `Name` when it is written `LIB:RECIPE` and is not a file (`file`: the
    /// path it would be); nil otherwise. A library that is not among `libraries` (the
    /// configuration's names) is refused with `fail`.
    static func configured(_ text: String, file: URL, libraries: [String],
                           fail: (String) -> HubConfigError) throws -> Name? {
        guard let reference = reference(text), !FileManager.default.fileExists(atPath: file.path) else { return nil }
        guard libraries.contains(reference.library) else {
            throw fail("recipe \"\(text)\" names library '\(reference.library)', which is not one of the configuration's libraries ("
                + (libraries.isEmpty ? "it has none" : "libraries: " + libraries.joined(separator: ", ")) + ")")
        }
        return Name(library: reference.library, recipe: reference.recipe)
    }

    /// The library names of the configuration `config` (the keys of its `libraries`).
    static func names(in config: ScriptValue) -> [String] {
        guard case .object(let libraries) = config["libraries"] else { return [] }
        return libraries.keys.sorted()
    }

    /// `LIB:RECIPE` split, or nil when `text` is not written that way (a file path, a
    /// subcommand). The library is a library name, the recipe dot-separated names.
    public static func reference(_ text: String) -> (library: String, recipe: String)? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let library = String(text[..<colon]), recipe = String(text[text.index(after: colon)...])
        guard let first = library.unicodeScalars.first, ("a"..."z").contains(first) || first == "_",
              library.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }) else { return nil }
        let parts = recipe.split(separator: ".", omittingEmptySubsequences: false)
        let valid = parts.allSatisfy { part in
            guard let first = part.unicodeScalars.first, first.properties.isAlphabetic || first == "_" else { return false }
            return part.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == "-") }
        }
        return valid ? (library, recipe) : nil
    }

    /// The file of `library:recipe` among `libraries`. Throws a `HubConfigError` that
    /// lists what exists: the libraries when there is no `library`, its recipes when it
    /// has no `recipe`.
    public static func file(_ name: Name, in libraries: [ModuleLibrary]) throws -> URL {
        try file((name.library, name.recipe), in: libraries)
    }

    public static func file(_ reference: (library: String, recipe: String), in libraries: [ModuleLibrary]) throws -> URL {
        let written = "\(reference.library):\(reference.recipe)"
        guard let library = libraries.first(where: { $0.name == reference.library }) else {
            guard !libraries.isEmpty else {
                throw HubConfigError("\(written) names a recipe of library '\(reference.library)', and the configuration has no libraries (libraries = { \(reference.library) = \"folder\" })")
            }
            throw HubConfigError("no library '\(reference.library)' (libraries: \(libraries.map(\.name).joined(separator: ", ")))")
        }
        let relative = reference.recipe.replacingOccurrences(of: ".", with: "/") + ".lua"
        let url = library.folder.appendingPathComponent(relative)
        let known = recipes(in: library)
        if known.contains(reference.recipe) || opensWithAManifest(url) { return url }
        throw HubConfigError("library \(library.name) has no recipe '\(reference.recipe)' "
            + "(recipes: \(known.isEmpty ? "none" : known.joined(separator: ", ")))")
    }

    /// Whether `url` is a recipe whose manifest does not load (its first statement is a
    /// `recipe` call): returned anyway, so running it reports what is wrong with the
    /// manifest instead of "no recipe". Modules and tests are not recipes.
    static func opensWithAManifest(_ url: URL) -> Bool {
        var info = stat()
        guard !url.lastPathComponent.hasSuffix("_test.lua"), url.lastPathComponent != "init.lua",
              stat(url.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG,   // never a device or a FIFO: it could keep us waiting
              let file = try? RecipeFile(path: url.path) else { return false }
        let code = file.source.split(separator: "\n").first { line in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            return !trimmed.isEmpty && !trimmed.hasPrefix("--")
        }
        return code.map { $0.trimmingCharacters(in: .whitespaces).hasPrefix("recipe") } ?? false
    }

    /// The recipes of `library` as `LIB:RECIPE` names them (`users.offboard`): its `.lua`
    /// files with a `recipe { … }` manifest, tests (`*_test.lua`) and `init.lua` aside.
    public static func recipes(in library: ModuleLibrary) -> [String] {
        LuaFiles.below(library.folder).filter { relative in
            guard !relative.hasSuffix("_test.lua"), !relative.hasSuffix("/init.lua"), relative != "init.lua" else { return false }
            let url = library.folder.appendingPathComponent(relative)
            guard let file = try? RecipeFile(path: url.path) else { return false }
            return (try? RecipeManifest.load(from: file)) != nil
        }.map { String($0.dropLast(4)).replacingOccurrences(of: "/", with: ".") }
    }

    /// Refuses a recipe `file` inside one of `libraries` when that library does not
    /// match its pins (`checkWhole`: every file, so a module the recipe will require
    /// is known good before anything runs), or when the recipe's bytes, as read for this
    /// run, no longer match its pin (`check`): a file replaced after the libraries were
    /// checked never runs. Files outside the libraries pass: the modules they require
    /// are checked as they load.
    public static func checkPin(_ file: RecipeFile, libraries: [ModuleLibrary]) throws {
        guard !libraries.isEmpty else { return }   // (no URL work for a run without libraries)
        let path = file.url.standardizedFileURL.resolvingSymlinksInPath().path
        for library in libraries {
            let folder = library.folder.standardizedFileURL.resolvingSymlinksInPath().path
            guard path.hasPrefix(folder + "/") else { continue }
            try library.checkWhole?()
            try library.check?(String(path.dropFirst(folder.count + 1)), Data(file.source.utf8))
        }
    }
}
