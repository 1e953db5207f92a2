import Foundation
import SystemText
import HubClient
import ScriptHost
import RunJournal

/// The configuration's `libraries` table: shared module folders by name,
/// `libraries = { ops = "../ops-recipes", sec = "git+file:///srv/git/sec.git@<commit>" }`
/// (a path relative to the configuration file's folder, or a git repository pinned to a
/// commit: `GitLibrarySource`). `require("ops.offboarding")` looks in the recipe's own
/// folder first (`ops/offboarding.lua`), then in library `ops`'s folder (`offboarding.lua`).
public enum LibrariesConfig {
    /// One entry of the `libraries` table as the file declares it, its syntax checked
    /// when the configuration is loaded; its folder is found (a git library's commit
    /// fetched into the state directory) only when a command needs it
    /// (`LoadedConfiguration.libraries(state:)`).
    struct Declaration: Sendable {
        let name: String
        let git: GitLibrarySource?
        /// The folder as written (relative to the configuration file's folder unless absolute).
        let path: String
    }

    /// The declared libraries of the configuration `value` of `file`, by name.
    /// - Throws: `HubConfigError` naming the entry at fault.
    static func declarations(_ value: ScriptValue, file: URL) throws -> [Declaration] {
        func fail(_ message: String) -> HubConfigError { HubConfigError("config \(file.path): \(message)") }
        guard case .object(let top) = value, let libraries = top["libraries"] else { return [] }
        let table: [String: ScriptValue]
        switch libraries {
        case .object(let t): table = t
        case .array([]): table = [:]
        default: throw fail("libraries must be a table of name = \"folder\" (or \"git+URL@COMMIT\")")
        }
        return try table.keys.sorted().map { name in
            guard let first = name.unicodeScalars.first, ("a"..."z").contains(first) || first == "_",
                  name.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }) else {
                throw fail("libraries: '\(name)' is not a library name (lowercase letters, digits and _, as in require(\"\(name).module\"))")
            }
            guard let path = table[name]?.stringValue, !path.isEmpty else {
                throw fail("libraries.\(name) must be a folder path or git+URL@COMMIT (a string)")
            }
            do { return Declaration(name: name, git: try GitLibrarySource.parse(path), path: path) } catch {
                throw fail("libraries.\(name): \(error)")
            }
        }
    }

    /// The libraries, each with its pin checks: a run checks only what it loads, so one
    /// changed file in one library stops only the runs that would load it.
    /// - `checkWhole` (before a recipe of the library runs, `LibraryRecipe.checkPin`):
    ///   every file of that library against `hubscript.lock`; a library never trusted,
    ///   or a file added, changed or removed since, stops the run before it starts with a
    ///   `LibraryPinError` naming what changed.
    /// - `check` (as `require` loads a module of the library): that file against its pin,
    ///   refused with `LibraryModulePin.refusal` (the file, the pinned and actual
    ///   SHA-256, and the trust command).
    /// - Throws: `HubConfigError` for a lock file that cannot be read.
    static func pinned(_ libraries: [ModuleLibrary], config: URL) throws -> [ModuleLibrary] {
        guard !libraries.isEmpty else { return [] }
        let lockURL = LibraryLock.url(besideConfig: config)
        let lock = try LibraryLock.read(lockURL)
        return libraries.map { library in
            ModuleLibrary(name: library.name, folder: library.folder, check: { relative, data in
                if let refusal = LibraryModulePin.refusal(library: library.name, relative: relative, data: data,
                                                          lock: lock, lockURL: lockURL) {
                    throw ScriptMessageError(refusal)
                }
            }, checkWhole: {
                guard let lock else {
                    throw LibraryPinError(config: config, lock: lockURL, libraries: [library.name], changes: nil)
                }
                let changes = lock.differences(to: try LibraryLock.current([library]), libraries: [library.name])
                if !changes.isEmpty {
                    throw LibraryPinError(config: config, lock: lockURL, libraries: [library.name], changes: changes)
                }
            })
        }
    }

    /// The configuration file and its libraries, pins not checked (`hubscript trust`,
    /// `hubscript verify`).
    public struct Unpinned {
        public let config: URL
        public let libraries: [ModuleLibrary]
        /// Git checkouts that are not exactly their pinned commit (HEAD elsewhere, a file
        /// changed, added or removed in the state folder), one message each: such a
        /// checkout is never trusted.
        public let checkoutProblems: [String]
    }

    /// The folders of `declarations` (of the configuration `file`). Every folder must
    /// exist; a git library's commit is fetched into `state` if it is not there yet.
    /// With `checkoutProblem`, each git checkout that was there already is checked with
    /// git as well, and told to it when it is not exactly its commit (a new one was
    /// checked as it was fetched).
    static func resolve(_ declarations: [Declaration], file: URL, state: StateDirectory,
                        checkoutProblem: ((String) -> Void)?) throws -> [ModuleLibrary] {
        func fail(_ message: String) -> HubConfigError { HubConfigError("config \(file.path): \(message)") }
        let base = file.deletingLastPathComponent()
        return try declarations.map { declaration in
            let name = declaration.name
            if let git = declaration.git {
                do {
                    let (folder, fetched) = try GitCheckout.checkout(git, name: name, state: state)
                    if let checkoutProblem, !fetched {
                        do { try GitCheckout.check(folder, is: git, name: name, git: try GitCommand.find(forLibrary: name)) } catch let error as GitLibraryError {
                            checkoutProblem("library \(name): \(error)")
                        }
                    }
                    return ModuleLibrary(name: name, folder: folder)
                } catch let error as GitLibraryError {
                    throw fail("libraries.\(name): \(error)")
                }
            }
            let path = declaration.path
            let folder = path.hasPrefix("/") ? URL(fileURLWithPath: path, isDirectory: true)
                : base.appendingPathComponent(path, isDirectory: true)
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder), isFolder.boolValue else {
                throw fail("libraries.\(name): no such folder \(folder.standardizedFileURL.path)")
            }
            // A folder that is a link (ops = "ops-current" → a release folder) is used
            // through its target: files are listed, pinned and loaded from there.
            return ModuleLibrary(name: name, folder: folder.standardizedFileURL.resolvingSymlinksInPath())
        }
    }
}

/// Library files that do not match `hubscript.lock` (or no lock at all): a recipe of
/// that library (or `hubscript test` of its tests) stops before anything runs.
/// `--json` shows `jsonFields` in its `error` event.
public struct LibraryPinError: Error, Sendable, CustomStringConvertible {
    public let config: URL
    public let lock: URL
    public let libraries: [String]
    /// What differs from the pins; nil: the libraries were never trusted (no lock file).
    public let changes: [LibraryLock.Change]?

    public var description: String {
        let names = libraries.joined(separator: " ")
        guard let changes else {
            return "the libraries of \(config.path) are not trusted yet (no \(lock.path)); review their files, then run hubscript trust \(names)"
        }
        return "library files changed since they were trusted (\(lock.path)); nothing ran:\n  "
            + changes.map(\.line).joined(separator: "\n  ")
            + "\nReview the changes, then run hubscript trust \(names) to pin them (hubscript verify lists them again)."
    }

    /// `code` (`library_not_trusted` or `library_changed`), `lock`, `libraries`, and
    /// `changes` (each `LibraryLock.Change.jsonValue`).
    public var jsonFields: [String: ScriptValue] {
        ["code": .string(changes == nil ? "library_not_trusted" : "library_changed"), "lock": .string(lock.path),
         "libraries": .array(libraries.map(ScriptValue.string)),
         "changes": .array((changes ?? []).map(\.jsonValue))]
    }
}

/// The check of one library module as `require` loads it.
enum LibraryModulePin {
    /// Why `data`, the bytes of `library/relative`, may not load — nil when they match
    /// their pin. Names the file, the pinned and actual SHA-256, and the trust command.
    static func refusal(library: String, relative: String, data: Data, lock: LibraryLock?, lockURL: URL) -> String? {
        let key = library + "/" + relative
        guard let lock else {
            return "library \(library) is not trusted yet (no \(lockURL.path)); review its files, then run hubscript trust \(library)"
        }
        let actual = Digest.sha256Hex(data)
        guard let pin = lock.pins[key] else {
            return "library file \(key) is not pinned in \(lockURL.path) (added since \(library) was trusted; sha256 \(actual)); "
                + "review it, then run hubscript trust \(library)"
        }
        guard pin.sha256 != actual else { return nil }
        return "library file \(key) changed since it was trusted: \(lockURL.path) pins sha256 \(pin.sha256), "
            + "the file now has sha256 \(actual); review it, then run hubscript trust \(library) (hubscript verify lists every change)"
    }
}
