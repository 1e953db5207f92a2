import Foundation
import HubClient
import ScriptHost

/// The configuration's `libraries` table: shared module folders by name,
/// `libraries = { ops = "../ops-recipes" }` (a path relative to the configuration
/// file's folder). `require("ops.offboarding")` looks in the recipe's own folder first
/// (`ops/offboarding.lua`), then in library `ops`'s folder (`offboarding.lua`).
public enum LibrariesConfig {
    /// The libraries of the configuration `explicit` or the search order finds; none
    /// without a configuration file. Every folder must exist.
    public static func load(explicit: String?, environment: [String: String] = ProcessInfo.processInfo.environment,
                            currentDirectory: String = FileManager.default.currentDirectoryPath) throws -> [ModuleLibrary] {
        guard let file = try HubConfig.locate(explicit: explicit, environment: environment,
                                              currentDirectory: currentDirectory) else { return [] }
        return try parse(try HubConfig.evaluate(file: file), file: file)
    }

    static func parse(_ value: ScriptValue, file: URL) throws -> [ModuleLibrary] {
        func fail(_ message: String) -> HubConfigError { HubConfigError("config \(file.path): \(message)") }
        guard case .object(let top) = value, let libraries = top["libraries"] else { return [] }
        let table: [String: ScriptValue]
        switch libraries {
        case .object(let t): table = t
        case .array([]): table = [:]
        default: throw fail("libraries must be a table of name = \"folder\"")
        }
        let base = file.deletingLastPathComponent()
        return try table.keys.sorted().map { name in
            guard let first = name.unicodeScalars.first, ("a"..."z").contains(first) || first == "_",
                  name.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }) else {
                throw fail("libraries: '\(name)' is not a library name (lowercase letters, digits and _, as in require(\"\(name).module\"))")
            }
            guard let path = table[name]?.stringValue, !path.isEmpty else {
                throw fail("libraries.\(name) must be a folder path (a string)")
            }
            let folder = path.hasPrefix("/") ? URL(fileURLWithPath: path, isDirectory: true)
                : base.appendingPathComponent(path, isDirectory: true)
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder), isFolder.boolValue else {
                throw fail("libraries.\(name): no such folder \(folder.standardizedFileURL.path)")
            }
            return ModuleLibrary(name: name, folder: folder)
        }
    }
}
