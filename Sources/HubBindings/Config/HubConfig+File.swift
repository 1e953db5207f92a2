import Foundation
import HubClient
import ScriptHost

/// Finding, trusting and evaluating the configuration file (`HubConfig` itself, its
/// profiles and how one is chosen, are HubClient's; evaluating the file needs Lua, so
/// that part lives here).
extension HubConfig {
    /// Finds and loads the configuration. Returns `.empty` when no file exists.
    public static func load(explicit: String?, environment: [String: String] = ProcessInfo.processInfo.environment,
                            currentDirectory: String = FileManager.default.currentDirectoryPath) throws -> HubConfig {
        if let explicit {
            guard FileManager.default.fileExists(atPath: explicit) else {
                throw HubConfigError("config file \(explicit) does not exist (given with --config)")
            }
            return try parse(file: URL(fileURLWithPath: explicit))
        }
        if let fromEnv = environment["HUBSCRIPT_CONFIG"], !fromEnv.isEmpty {
            guard FileManager.default.fileExists(atPath: fromEnv) else {
                throw HubConfigError("config file \(fromEnv) does not exist (named by $HUBSCRIPT_CONFIG)")
            }
            return try parse(file: URL(fileURLWithPath: fromEnv))
        }
        let configHome = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.config")
        for candidate in [currentDirectory + "/hubscript.config.lua", configHome + "/hubscript/config.lua"]
        where FileManager.default.fileExists(atPath: candidate) {
            return try parse(file: URL(fileURLWithPath: candidate))
        }
        return .empty
    }

    /// Reads `file` if it is trusted (`ConfigTrust`) and evaluates it as data.
    static func parse(file: URL) throws -> HubConfig {
        let data = try ConfigTrust.read(file.path)
        if data.first == 0x1B {
            throw HubConfigError("config \(file.path): is a binary (precompiled) chunk; a configuration is Lua source text")
        }
        guard let source = String(data: data, encoding: .utf8) else {
            throw HubConfigError("config \(file.path): is not UTF-8 text")
        }
        let value: ScriptValue
        do { value = try LuaDataFile.evaluate(source: source, displayPath: DisplayPath.relative(file)) } catch {
            throw HubConfigError("config \(file.path): \(error)")
        }
        return try ConfigParser(file: file.path).parse(value, source: file)
    }
}
