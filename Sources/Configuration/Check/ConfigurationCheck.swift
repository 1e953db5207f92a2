import Foundation
import SystemText
import HubClient
import ScriptHost

/// `hubscript jobs check` (and `hubscript check --config`): every job and trigger of the
/// configuration checked as its fire or event would check it — before one comes. Where
/// `LoadedConfiguration.load` stops at the first mistake, this goes on and collects
/// every problem of every entry:
///
/// - the recipe exists and loads (a file, or `LIB:RECIPE` among the pinned libraries;
///   its syntax; its manifest; `needs` names known permissions);
/// - `params` against the recipe's manifest: unknown names (with a did-you-mean),
///   values of the wrong type, required parameters missing, `file` params that are
///   not readable files; a trigger's recipe declares `event` as a `table`;
/// - the profile exists (or the default one can be chosen);
/// - the schedule and the time zone parse, and every other field is well formed;
/// - `allow` names known permissions and covers the recipe's `needs`;
/// - the Dispatch targets exist: a job's `on_failure.dispatch` and the recipe's
///   manifest `targets` under the entry's profile.
///
/// Each problem carries the configuration file's line where it can be found in the
/// text (the entry's key, or the field's); a configuration built by code may have none.
public struct ConfigurationCheck: Sendable {
    /// One problem: where in the configuration file, and what is wrong and what to do.
    public struct Problem: Sendable, Equatable {
        /// The configuration file's line (1-based); nil when it cannot be told.
        public let line: Int?
        public let message: String
    }

    /// A job or trigger and its problems (none: it passes).
    public struct Entry: Sendable {
        public enum Kind: String, Sendable { case job, trigger }
        public let kind: Kind
        public let name: String
        /// The recipe as written (`recipes/sync.lua`, `ops:offboard`); nil when missing.
        public let recipe: String?
        public let problems: [Problem]
        public var ok: Bool { problems.isEmpty }
    }

    /// The file checked.
    public let file: URL
    /// Problems of the file as a whole (it does not evaluate, its profiles or another
    /// part are wrong): every command that reads it would stop on them.
    public let fileProblems: [Problem]
    /// The jobs, then the triggers, each sorted by name.
    public let entries: [Entry]

    /// Whether nothing is wrong.
    public var ok: Bool { fileProblems.isEmpty && entries.allSatisfy(\.ok) }

    /// Checks the configuration the search order finds (`explicit` as `--config`, as
    /// `LoadedConfiguration.load` does); nil when there is none. `profile` is the
    /// command line's (`--profile`, `$HUBSCRIPT_PROFILE`): the profile of the entries
    /// that name none. `state` holds the git libraries' checkouts (fetched if missing,
    /// as a fire would).
    /// - Throws: `HubConfigError` only when a file named explicitly does not exist.
    public static func run(explicit: String?, profile: String?, state: StateDirectory,
                           environment: [String: String] = ProcessEnvironment.all,
                           currentDirectory: String = AbsolutePath.currentDirectory(),
                           evaluator: ConfigEvaluator = .lua) throws -> ConfigurationCheck? {
        guard let path = try ConfigurationSearch.locate(explicit: explicit, environment: environment,
                                                        currentDirectory: currentDirectory) else { return nil }
        let file = URL(fileURLWithPath: path)
        let source: String
        let value: ScriptValue
        do {
            let data = try ConfigTrust.read(path)
            source = String(decoding: data, as: UTF8.self)
            value = try evaluator.evaluate(data, path)
        } catch {
            return ConfigurationCheck(file: file, fileProblems: [located(withoutFilePrefix("\(error)", file: file), file: file)], entries: [])
        }
        let lines = ConfigSourceLines(source)
        var fileProblems: [Problem] = []
        func attempt<T>(_ part: () throws -> T) -> T? {
            do { return try part() } catch {
                fileProblems.append(Problem(line: nil, message: Self.withoutFilePrefix("\(error)", file: file)))
                return nil
            }
        }
        guard let hub = attempt({ try ConfigParser(file: path).parse(value, source: file) }) else {
            return ConfigurationCheck(file: file, fileProblems: fileProblems, entries: [])
        }
        _ = attempt { try JournalConfig.parse(value, file: file) }
        _ = attempt { try RetentionConfig.parse(value, file: file) }
        _ = attempt { try ApprovalsConfig.parse(value, file: file, hub: hub) }
        let libraries: Result<[ModuleLibrary], Error>
        if let declarations = attempt({ try LibrariesConfig.declarations(value, file: file) }) {
            libraries = Result {
                declarations.isEmpty ? [] : try LibrariesConfig.pinned(
                    try LibrariesConfig.resolve(declarations, file: file, state: state, checkoutProblem: nil), config: file)
            }
        } else {
            libraries = .failure(HubConfigError("the configuration's libraries are not valid (see above)"))
        }
        let context = EntryContext(file: file, hub: hub, profile: profile, libraryNames: LibraryRecipe.names(in: value),
                                   libraries: libraries, lines: lines)
        var entries: [Entry] = []
        for section in ["jobs", "triggers"] {
            guard case .object(let top) = value, let table = top[section] else { continue }
            switch table {
            case .object(let items):
                entries += items.keys.sorted().map { name in
                    section == "jobs" ? context.job(name, items[name]!) : context.trigger(name, items[name]!)
                }
            case .array([]): continue
            default:
                fileProblems.append(Problem(line: lines.section(section), message:
                    "\(section) must be a table of name = { … } (see docs/\(section == "jobs" ? "jobs" : "webhooks").md)"))
            }
        }
        return ConfigurationCheck(file: file, fileProblems: fileProblems, entries: entries)
    }

    /// A Lua error about the file (`NAME:LINE: message`, NAME its path or its name) as
    /// a problem at that line.
    static func located(_ message: String, file: URL) -> Problem {
        for name in [file.path, file.lastPathComponent] where message.hasPrefix(name + ":") {
            let rest = message.dropFirst(name.count + 1)
            let digits = rest.prefix { $0.isASCII && $0.isNumber }
            if let line = Int(digits), rest.dropFirst(digits.count).hasPrefix(": ") {
                return Problem(line: line, message: String(rest.dropFirst(digits.count + 2)))
            }
        }
        return Problem(line: nil, message: message)
    }

    /// `message` without the `config FILE: ` the parsers start with (the report names the file).
    static func withoutFilePrefix(_ message: String, file: URL) -> String {
        let prefix = "config \(file.path): "
        return message.hasPrefix(prefix) ? String(message.dropFirst(prefix.count)) : message
    }
}
