import Foundation
import SystemText
import HubClient
import ScriptHost

/// Where the configuration file is found and how its bytes become a value (`HubConfig`
/// itself, its profiles and how one is chosen, are HubClient's; evaluating the file
/// needs Lua, so that part lives here). Only `LoadedConfiguration.load` uses these: a
/// command reads its file once.
enum ConfigurationSearch {
    /// The configuration file the search order finds (`--config`, `$HUBSCRIPT_CONFIG`,
    /// `./hubscript.config.lua`, `$XDG_CONFIG_HOME/hubscript/config.lua`), as an absolute
    /// path (`AbsolutePath.of`); nil if none. A file named explicitly must exist.
    static func locate(explicit: String?, environment: [String: String], currentDirectory: String) throws -> String? {
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
}

/// Turns the configuration file's bytes into a value: the step `LoadedConfiguration.load`
/// takes once per command. `lua` is the one hubscript uses; a test passes its own (for
/// example `lua` wrapped in a counter) to see how often a command evaluates its file.
public struct ConfigEvaluator: Sendable {
    /// Evaluates `data`, the bytes of the file at `path`; throws `HubConfigError`.
    public let evaluate: @Sendable (_ data: Data, _ path: String) throws -> ScriptValue

    public init(_ evaluate: @escaping @Sendable (_ data: Data, _ path: String) throws -> ScriptValue) {
        self.evaluate = evaluate
    }

    /// The file as Lua data (`LuaDataFile`): source text only, in a data-only state.
    public static let lua = ConfigEvaluator { data, path in
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
