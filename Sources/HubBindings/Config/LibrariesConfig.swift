import Foundation
import HubClient
import ScriptHost

/// The configuration's `libraries` table: shared module folders by name,
/// `libraries = { ops = "../ops-recipes" }` (a path relative to the configuration
/// file's folder). `require("ops.offboarding")` looks in the recipe's own folder first
/// (`ops/offboarding.lua`), then in library `ops`'s folder (`offboarding.lua`).
public enum LibrariesConfig {
    /// The libraries of the configuration `explicit` or the search order finds, their
    /// pins checked; none without a configuration file. Every folder must exist.
    public static func load(explicit: String?, environment: [String: String] = ProcessInfo.processInfo.environment,
                            currentDirectory: String = FileManager.default.currentDirectoryPath) throws -> [ModuleLibrary] {
        // A configuration that cannot be found or read is not this function's to report:
        // the run reads it again to connect, before anything runs, and reports it there.
        guard let file = try? HubConfig.locate(explicit: explicit, environment: environment,
                                               currentDirectory: currentDirectory),
              let value = try? HubConfig.evaluate(file: file) else { return [] }
        return try pinned(try parse(value, file: file), config: file)
    }

    /// The libraries with their pins checked: now, every file against `hubscript.lock`
    /// (a library never trusted, or changed since, stops the run before it starts, with
    /// what changed), and each module again as `require` loads it.
    static func pinned(_ libraries: [ModuleLibrary], config: URL) throws -> [ModuleLibrary] {
        guard !libraries.isEmpty else { return [] }
        let lockURL = LibraryLock.url(besideConfig: config)
        let names = libraries.map(\.name).joined(separator: " ")
        guard let lock = try LibraryLock.read(lockURL) else {
            throw HubConfigError("""
                the libraries of \(config.path) are not trusted yet (no \(lockURL.path)); review their files, \
                then run hubscript trust \(names)
                """)
        }
        let changes = lock.changes(to: try LibraryLock.current(libraries))
        if !changes.isEmpty {
            throw HubConfigError("library files changed since they were trusted (\(lockURL.path)); nothing ran:\n  "
                + changes.joined(separator: "\n  ")
                + "\nReview the changes, then run hubscript trust \(names) to pin them (hubscript verify lists them again).")
        }
        return libraries.map { library in
            ModuleLibrary(name: library.name, folder: library.folder) { relative, data in
                let key = library.name + "/" + relative
                guard let pin = lock.pins[key], pin.sha256 == Digest.sha256Hex(data) else {
                    throw ScriptMessageError("require: \(key) changed while the run was starting; it no longer matches \(lockURL.path) (review it, then hubscript trust \(library.name))")
                }
            }
        }
    }

    /// The configuration file and its libraries, pins not checked (`hubscript trust`,
    /// `hubscript verify`); nil without a configuration file.
    public static func unpinned(explicit: String?) throws -> (config: URL, libraries: [ModuleLibrary])? {
        guard let file = try HubConfig.locate(explicit: explicit, environment: ProcessInfo.processInfo.environment,
                                              currentDirectory: FileManager.default.currentDirectoryPath) else { return nil }
        return (file, try parse(try HubConfig.evaluate(file: file), file: file))
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
