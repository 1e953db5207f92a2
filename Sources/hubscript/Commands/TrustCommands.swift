import Foundation
import HubBindings
import HubClient
import ScriptHost

/// The configuration's libraries for `trust` and `verify`, with those named (all when
/// none is) and the lock file beside the configuration.
private struct LibrarySelection {
    let libraries: [ModuleLibrary]
    let selected: Set<String>
    let lockURL: URL
    /// The selected git libraries whose checkout is not exactly their commit.
    let checkoutProblems: [String]

    init(_ arguments: ParsedArguments, command: String) throws {
        let config = arguments.value("config"), names = arguments.positionals
        let state = CommonOptions.stateDirectory(arguments)
        guard let found = try LibrariesConfig.unpinned(explicit: config, state: state), !found.libraries.isEmpty else {
            throw UsageError("the configuration has no libraries (libraries = { name = \"folder\" }); nothing to \(command)")
        }
        let known = found.libraries.map(\.name)
        if let unknown = names.first(where: { !known.contains($0) }) {
            throw UsageError("no library '\(unknown)' in \(found.config.path) (libraries: \(known.joined(separator: ", ")))")
        }
        let selected = Set(names.isEmpty ? known : names)
        libraries = found.libraries
        self.selected = selected
        lockURL = LibraryLock.url(besideConfig: found.config)
        checkoutProblems = found.checkoutProblems.filter { problem in
            selected.contains { problem.hasPrefix("library \($0): ") }
        }
    }

    /// The selected libraries' files now, and how they differ from `lock`.
    func compare(with lock: LibraryLock) throws -> (now: LibraryLock, changes: [String]) {
        let now = try LibraryLock.current(libraries.filter { selected.contains($0.name) })
        return (now, lock.changes(to: now, libraries: selected))
    }

    var shownLock: String { DisplayPath.relative(lockURL) }
    var shownNames: String { selected.sorted().joined(separator: ", ") }
}

/// `hubscript trust [LIB…]`: pins the libraries' files as they are now in hubscript.lock.
struct TrustCommand: Command {
    static let configuration = CommandConfiguration(
        name: "trust",
        abstract: "Pin the configuration's libraries (SHA-256 of every file) in hubscript.lock.",
        usage: "[LIB…] [--config FILE] [--state-dir DIR]",
        options: Array(CommonOptions.specs.dropFirst()),
        discussion: """
        Shows what changed since the last trust — files added, changed or removed, and
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
        lock.pins = lock.pins.filter { !selection.selected.contains(String($0.key.prefix { $0 != "/" })) }
        lock.pins.merge(now.pins) { $1 }
        try lock.write(to: selection.lockURL)
        for line in changes { Console.out(line + "\n") }
        Console.out("trusted \(selection.shownNames): \(now.pins.count) files pinned in \(selection.shownLock)\n")
        return ExitCode.success
    }
}

/// `hubscript verify [LIB…]`: exit 0 when every library file matches hubscript.lock, 1 otherwise.
struct VerifyCommand: Command {
    static let configuration = CommandConfiguration(
        name: "verify",
        abstract: "Check the configuration's libraries against hubscript.lock (exit 0 or 1, for CI).",
        usage: "[LIB…] [--config FILE] [--state-dir DIR]",
        options: Array(CommonOptions.specs.dropFirst()),
        discussion: """
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
