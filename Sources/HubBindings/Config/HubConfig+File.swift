import Foundation
import SystemText
import HubClient
import ScriptHost

/// Finding, trusting and evaluating the configuration file (`HubConfig` itself, its
/// profiles and how one is chosen, are HubClient's; evaluating the file needs Lua, so
/// that part lives here).
extension HubConfig {
    /// Finds and loads the configuration. Returns `.empty` when no file exists.
    public static func load(explicit: String?, environment: [String: String] = ProcessEnvironment.all,
                            currentDirectory: String = AbsolutePath.currentDirectory()) throws -> HubConfig {
        guard let file = try locate(explicit: explicit, environment: environment, currentDirectory: currentDirectory) else {
            return .empty
        }
        return try ConfigParser(file: file.path).parse(try evaluate(file: file), source: file)
    }

    /// The configuration file the search order finds (`--config`, `$HUBSCRIPT_CONFIG`,
    /// `./hubscript.config.lua`, `$XDG_CONFIG_HOME/hubscript/config.lua`); nil if none.
    /// A file named explicitly must exist.
    static func locate(explicit: String?, environment: [String: String], currentDirectory: String) throws -> URL? {
        if let explicit {
            guard PathStatus.exists(explicit) else {
                throw HubConfigError("config file \(explicit) does not exist (given with --config)")
            }
            return URL(fileURLWithPath: explicit)
        }
        if let fromEnv = environment["HUBSCRIPT_CONFIG"], !fromEnv.isEmpty {
            guard PathStatus.exists(fromEnv) else {
                throw HubConfigError("config file \(fromEnv) does not exist (named by $HUBSCRIPT_CONFIG)")
            }
            return URL(fileURLWithPath: fromEnv)
        }
        let configHome = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.config")
        return [currentDirectory + "/hubscript.config.lua", configHome + "/hubscript/config.lua"]
            .first { PathStatus.exists($0) }.map { URL(fileURLWithPath: $0) }
    }

    /// Reads `file` if it is trusted (`ConfigTrust`) and evaluates it as data.
    static func evaluate(file: URL) throws -> ScriptValue {
        let data = try ConfigTrust.read(file.path)
        if data.first == 0x1B {
            throw HubConfigError("config \(file.path): is a binary (precompiled) chunk; a configuration is Lua source text")
        }
        guard let source = String(data: data, encoding: .utf8) else {
            throw HubConfigError("config \(file.path): is not UTF-8 text")
        }
        do { return try LuaDataFile.evaluate(source: source, displayPath: DisplayPath.relative(file)) } catch {
            throw HubConfigError("config \(file.path): \(error)")
        }
    }
}
