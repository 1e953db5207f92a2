import Foundation
import SystemText
import HubClient
import PostgresKit
import ScriptHost
import RunJournal

/// The configuration file as one command sees it: found, trusted, read, evaluated and
/// validated once, at the command's entry, then handed to everything that needs a part
/// of it (profiles, Dispatch targets, libraries, the journal, jobs, triggers).
///
/// Contracts:
/// - `load` reads the file's bytes once (`ConfigTrust.read`: the trust check and the
///   read go through one descriptor) and evaluates them once; nothing else in hubscript
///   reads the file. A command therefore sees one version of the file however long it
///   runs: a file changed while `jobs serve` or `listen` runs takes effect at their
///   next start.
/// - Every part is validated by `load`: a mistake anywhere in the file stops every
///   command that reads it, with a message that starts `config FILE: ` and names the key.
/// - The value is immutable. Only the libraries' folders are resolved later
///   (`libraries(state:)`), since a git library may need fetching, which only the
///   commands that load recipes should do; their declarations are checked by `load`.
public struct LoadedConfiguration: Sendable {
    /// The file read; nil when none was found (then there are no profiles, jobs,
    /// triggers or libraries, and the journal is the state directory's SQLite file).
    public let file: URL?
    /// The Hub profiles and Dispatch targets.
    public let hub: HubConfig
    public let jobs: JobsConfig
    public let triggers: TriggersConfig
    /// The `journal` key's PostgreSQL URL; nil: the SQLite journal of the state directory.
    public let journal: PostgresURL?
    /// The `approvals` rules: which saved plans need approvals before apply (`ApprovalsConfig`).
    public private(set) var approvals = ApprovalsConfig.none
    /// The `retention` key (nil: runs are pruned only by `hubscript runs prune`).
    public var retention: RetentionConfig? = nil
    let libraryDeclarations: [LibrariesConfig.Declaration]

    /// The configuration of a command that found no file.
    public static let none = LoadedConfiguration(
        file: nil, hub: .empty, jobs: JobsConfig(source: nil, jobs: []), triggers: TriggersConfig(source: nil, triggers: []),
        journal: nil, libraryDeclarations: [])

    /// Finds the configuration (`--config` as `explicit`, `$HUBSCRIPT_CONFIG`,
    /// `./hubscript.config.lua`, `$XDG_CONFIG_HOME/hubscript/config.lua`), checks it is
    /// trusted (`ConfigTrust`), reads it, evaluates it with `evaluator` and validates
    /// every part. Returns `.none` when no file is found.
    /// - Throws: `HubConfigError` saying what is wrong, where, and what to write instead.
    public static func load(explicit: String?, environment: [String: String] = ProcessEnvironment.all,
                            currentDirectory: String = AbsolutePath.currentDirectory(),
                            evaluator: ConfigEvaluator = .lua) throws -> LoadedConfiguration {
        guard let path = try ConfigurationSearch.locate(explicit: explicit, environment: environment,
                                                        currentDirectory: currentDirectory) else { return .none }
        let value = try evaluator.evaluate(try ConfigTrust.read(path), path)
        let file = URL(fileURLWithPath: path)
        let hub = try ConfigParser(file: path).parse(value, source: file)
        var loaded = LoadedConfiguration(
            file: file, hub: hub, jobs: try JobsConfigParser(file: file, hub: hub).parse(value),
            triggers: try TriggersConfigParser(file: file, hub: hub).parse(value),
            journal: try JournalConfig.parse(value, file: file),
            retention: try RetentionConfig.parse(value, file: file),
            libraryDeclarations: try LibrariesConfig.declarations(value, file: file))
        loaded.approvals = try ApprovalsConfig.parse(value, file: file, hub: hub)
        return loaded
    }

    /// The journal the configuration names: PostgreSQL when the file says so, else
    /// SQLite at `state`'s journal file.
    public func journalLocation(state: StateDirectory) throws -> JournalLocation {
        if let journal { return .postgres(journal) }
        return .sqlite(path: try state.journalFilePath)
    }

    /// The names of the configuration's libraries.
    public var libraryNames: [String] { libraryDeclarations.map(\.name) }

    /// The configuration's libraries with their pins checked (`LibrariesConfig.pinned`:
    /// `hubscript.lock` is read now, each file checked as it loads); none without a file.
    /// Every folder must exist; a git library's commit is fetched into `state` if it is
    /// not there yet.
    public func libraries(state: StateDirectory) throws -> [ModuleLibrary] {
        guard let file, !libraryDeclarations.isEmpty else { return [] }
        return try LibrariesConfig.pinned(
            try LibrariesConfig.resolve(libraryDeclarations, file: file, state: state, checkoutProblem: nil), config: file)
    }

    /// The configuration's libraries, pins not checked (`hubscript trust`, `hubscript
    /// verify`), with the git checkouts that are not exactly their commit; nil without
    /// a configuration file.
    public func unpinnedLibraries(state: StateDirectory) throws -> LibrariesConfig.Unpinned? {
        guard let file else { return nil }
        var problems: [String] = []
        let libraries = try LibrariesConfig.resolve(libraryDeclarations, file: file, state: state) { problems.append($0) }
        return LibrariesConfig.Unpinned(config: file, libraries: libraries, checkoutProblems: problems)
    }
}
