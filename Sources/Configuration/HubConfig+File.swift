import Foundation
import SystemText
import Synchronization
import HubClient
import ScriptHost

/// Finding, trusting and evaluating the configuration file (`HubConfig` itself, its
/// profiles and how one is chosen, are HubClient's; evaluating the file needs Lua, so
/// that part lives here).
extension HubConfig {
    /// Finds and loads the configuration. Returns `.empty` when no file exists.
    public static func load(explicit: String?, environment: [String: String] = ProcessEnvironment.all,
                            currentDirectory: String = AbsolutePath.currentDirectory()) throws -> HubConfig {
        guard let path = try locatePath(explicit: explicit, environment: environment, currentDirectory: currentDirectory) else {
            return .empty
        }
        return try ConfigParser(file: path).parse(try evaluate(path: path), source: URL(fileURLWithPath: path))
    }

    /// The configuration file the search order finds (`--config`, `$HUBSCRIPT_CONFIG`,
    /// `./hubscript.config.lua`, `$XDG_CONFIG_HOME/hubscript/config.lua`); nil if none.
    /// A file named explicitly must exist.
    static func locate(explicit: String?, environment: [String: String], currentDirectory: String) throws -> URL? {
        try locatePath(explicit: explicit, environment: environment, currentDirectory: currentDirectory)
            .map { URL(fileURLWithPath: $0) }
    }

    /// `locate`'s file as the absolute path its `URL` would give (`AbsolutePath.of`):
    /// what a run's start reads, without a `URL` whose `path` is costly on its first call
    /// (docs/performance.md, "What start-up avoids").
    static func locatePath(explicit: String?, environment: [String: String], currentDirectory: String) throws -> String? {
        if let explicit {
            guard PathStatus.exists(explicit) else {
                throw HubConfigError("config file \(explicit) does not exist (given with --config)")
            }
            return AbsolutePath.of(explicit)
        }
        if let fromEnv = environment["HUBSCRIPT_CONFIG"], !fromEnv.isEmpty {
            guard PathStatus.exists(fromEnv) else {
                throw HubConfigError("config file \(fromEnv) does not exist (named by $HUBSCRIPT_CONFIG)")
            }
            return AbsolutePath.of(fromEnv)
        }
        let configHome = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.config")
        return [currentDirectory + "/hubscript.config.lua", configHome + "/hubscript/config.lua"]
            .first { PathStatus.exists($0) }.map { AbsolutePath.of($0) }
    }

    /// Reads `file` if it is trusted (`ConfigTrust`) and evaluates it as data.
    static func evaluate(file: URL) throws -> ScriptValue { try evaluate(path: file.path) }

    /// Reads `path` if it is trusted and evaluates it as data. A run reads its file up to
    /// four times (profiles, libraries, journal, dispatch): each read checks the file's
    /// trust and bytes again, but bytes already evaluated in this process are not
    /// evaluated again (a file that is not plain literals costs a Lua state each time).
    static func evaluate(path: String) throws -> ScriptValue {
        let data = try ConfigTrust.read(path)
        if let last = lastEvaluated.withLock({ $0 }), last.path == path, last.data == data { return last.value }
        let value = try evaluate(data, path: path)
        lastEvaluated.withLock { $0 = (path, data, value) }
        return value
    }

    /// The last file `evaluate(path:)` evaluated, with its bytes.
    private static let lastEvaluated = Mutex<(path: String, data: Data, value: ScriptValue)?>(nil)

    private static func evaluate(_ data: Data, path: String) throws -> ScriptValue {
        if data.first == 0x1B {
            throw HubConfigError("config \(path): is a binary (precompiled) chunk; a configuration is Lua source text")
        }
        guard let source = String(data: data, encoding: .utf8) else {
            throw HubConfigError("config \(path): is not UTF-8 text")
        }
        do {
            return try LuaDataFile.evaluate(source: source, displayPath: DisplayPath.relative(URL(fileURLWithPath: path)))
        } catch {
            throw HubConfigError("config \(path): \(error)")
        }
    }
}
