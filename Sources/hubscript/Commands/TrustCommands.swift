import Foundation
import HubClient
import ScriptHost
import Configuration

/// The configuration's libraries for `trust` and `verify`, with those named (all when
/// none is) and the lock file beside the configuration. An argument is a library's
/// name, or a path: a library's folder (that library), or a file inside one (that file
/// alone).
private struct LibrarySelection {
    let libraries: [ModuleLibrary]
    /// Libraries selected whole.
    let selected: Set<String>
    /// Single files selected by path, as pin keys (`library/relative/path.lua`).
    let files: Set<String>
    let lockURL: URL
    /// The selected git libraries whose checkout is not exactly their commit.
    let checkoutProblems: [String]

    init(_ arguments: ParsedArguments, command: String) throws {
        let config = arguments.value("config"), names = arguments.positionals
        let state = CommonOptions.stateDirectory(arguments)
        guard let found = try LoadedConfiguration.load(explicit: config).unpinnedLibraries(state: state), !found.libraries.isEmpty else {
            throw UsageError("the configuration has no libraries (libraries = { name = \"folder\" }); nothing to \(command)")
        }
        let known = found.libraries.map(\.name)
        var whole = Set<String>(), files = Set<String>()
        for name in names {
            if known.contains(name) {
                whole.insert(name)
            } else if FileManager.default.fileExists(atPath: name), let (library, relative) = Self.locate(name, in: found.libraries) {
                if let relative { files.insert(library + "/" + relative) } else { whole.insert(library) }
            } else if FileManager.default.fileExists(atPath: name) {
                throw UsageError("\(name) is not a .lua file or folder inside a library of \(found.config.path) (libraries: "
                                 + found.libraries.map { "\($0.name) at \(DisplayPath.relative($0.folder))" }.joined(separator: ", ") + ")")
            } else if name.contains("/") || name.hasSuffix(".lua") {
                throw UsageError("no such file or folder: \(name) (to trust a file's removal, trust its library by name)")
            } else {
                throw UsageError("no library '\(name)' in \(found.config.path) (libraries: \(known.joined(separator: ", ")))")
            }
        }
        let selected = names.isEmpty ? Set(known) : whole
        libraries = found.libraries
        self.selected = selected
        self.files = files
        lockURL = LibraryLock.url(besideConfig: found.config)
        let touched = selected.union(files.map { String($0.prefix { $0 != "/" }) })
        checkoutProblems = found.checkoutProblems.filter { problem in
            touched.contains { problem.hasPrefix("library \($0): ") }
        }
    }

    /// The library holding `path` and the file's path inside it (nil for the library's
    /// own folder); nil when no library holds it or it is not a `.lua` file or folder.
    private static func locate(_ path: String, in libraries: [ModuleLibrary]) -> (String, String?)? {
        let real = URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
        for library in libraries {
            let folder = library.folder.standardizedFileURL.resolvingSymlinksInPath().path
            if real == folder { return (library.name, nil) }
            guard real.hasPrefix(folder + "/"), real.hasSuffix(".lua") else { continue }
            return (library.name, String(real.dropFirst(folder.count + 1)))
        }
        return nil
    }

    /// Whether a pin key is among the selected.
    func includes(_ key: String) -> Bool {
        selected.contains(String(key.prefix { $0 != "/" })) || files.contains(key)
    }

    /// The selected files now, and how they differ from `lock`.
    func compare(with lock: LibraryLock) throws -> (now: LibraryLock, changes: [String]) {
        let scanned = libraries.filter { library in selected.contains(library.name) || files.contains { $0.hasPrefix(library.name + "/") } }
        var now = try LibraryLock.current(scanned)
        now.pins = now.pins.filter { includes($0.key) }
        var trusted = lock
        trusted.pins = trusted.pins.filter { includes($0.key) }
        return (now, trusted.changes(to: now))
    }

    var shownLock: String { DisplayPath.relative(lockURL) }
    var shownNames: String { (selected.sorted() + files.sorted()).joined(separator: ", ") }
}

/// `hubscript trust [LIB|PATH…]`: pins the libraries' files as they are now in hubscript.lock.
struct TrustCommand: Command {
    static let configuration = CommandConfiguration(
        name: "trust",
        abstract: "Pin the configuration's libraries (SHA-256 of every file) in hubscript.lock.",
        usage: "[LIB|PATH…] [--config FILE] [--state-dir DIR]",
        options: Array(CommonOptions.specs.dropFirst()),
        discussion: """
        LIB is a library's name; PATH a library's folder, or one .lua file inside a
        library (only that file is pinned again). Shows what changed since the last trust — files added, changed or removed, and
        what each new or changed recipe's manifest adds (needs, secrets, limits) — then
        records the new pins in hubscript.lock beside the configuration file. With LIB
        names, only those libraries are pinned again. A git library (git+URL@COMMIT) is
        fetched into the state folder if needed, and its checkout must be exactly that
        commit: a checkout changed after the fetch is never trusted. A run stops before
        it starts when a library file no longer matches its pin; hubscript verify checks
        them all.
        """)

    let arguments: ParsedArguments

    init(_ arguments: ParsedArguments) throws { self.arguments = arguments }

    func run() throws -> Int32 {
        let selection = try LibrarySelection(arguments, command: "trust")
        if !selection.checkoutProblems.isEmpty {
            Console.err(selection.checkoutProblems.map { "hubscript trust: \($0)\n" }.joined() + "nothing was trusted\n")
            return ExitCode.usage
        }
        let old = try LibraryLock.read(selection.lockURL) ?? LibraryLock()
        let (now, changes) = try selection.compare(with: old)
        var lock = old
        lock.pins = lock.pins.filter { !selection.includes($0.key) }
        lock.pins.merge(now.pins) { $1 }
        try lock.write(to: selection.lockURL)
        for line in changes { Console.out(line + "\n") }
        Console.out("trusted \(selection.shownNames): \(now.pins.count) file\(now.pins.count == 1 ? "" : "s") pinned in \(selection.shownLock)\n")
        return ExitCode.success
    }
}

/// `hubscript verify [LIB|PATH…]`: exit 0 when every library file matches hubscript.lock, 1 otherwise.
struct VerifyCommand: Command {
    static let configuration = CommandConfiguration(
        name: "verify",
        abstract: "Check the configuration's libraries against hubscript.lock (exit 0 or 1, for CI).",
        usage: "[LIB|PATH…] [--config FILE] [--state-dir DIR]",
        options: Array(CommonOptions.specs.dropFirst()),
        discussion: """
        LIB and PATH select as for hubscript trust (all libraries when none is given).
        Lists every file added, changed or removed since hubscript trust, with what a new
        or changed recipe's manifest adds (needs, secrets, limits), and each git library
        whose checkout is not exactly its commit. Exits 0 if everything matches, 1 if
        anything differs or no hubscript.lock exists.
        """)

    let arguments: ParsedArguments

    init(_ arguments: ParsedArguments) throws { self.arguments = arguments }

    func run() throws -> Int32 {
        let selection = try LibrarySelection(arguments, command: "verify")
        guard let lock = try LibraryLock.read(selection.lockURL) else {
            Console.out("no \(selection.shownLock): the libraries were never trusted (run hubscript trust)\n")
            return ExitCode.recipeFailed
        }
        let (now, pinChanges) = try selection.compare(with: lock)
        let changes = selection.checkoutProblems + pinChanges
        for line in changes { Console.out(line + "\n") }
        if changes.isEmpty {
            Console.out("ok: \(now.pins.count) files of \(selection.shownNames) match \(selection.shownLock)\n")
            return ExitCode.success
        }
        Console.out("\(changes.count) difference\(changes.count == 1 ? "" : "s") from \(selection.shownLock)\n")
        return ExitCode.recipeFailed
    }
}
