import Foundation
import ScriptHost

/// The configuration file: profiles (and, later, jobs).
///
/// A data-only Lua file, evaluated in an empty sandbox, that returns a table:
///
/// ```lua
/// return {
///   default_profile = "prod",
///   profiles = {
///     prod = { hub_url = "https://api.substratalapps.com", api_key_env = "SUBSTRATAL_API_KEY",
///              rate_limit_per_minute = 100 },
///     me   = { hub_url = "https://api.substratalapps.com", email = "me@example.com" },  -- hubscript login
///     dev  = { sandbox = true },                                                         -- the built-in sandbox Hub
///   },
/// }
/// ```
/// Search order: `--config`, `$HUBSCRIPT_CONFIG`, `./hubscript.config.lua`,
/// `$XDG_CONFIG_HOME/hubscript/config.lua` (or `~/.config/hubscript/config.lua`). The
/// first file found must be trusted (`ConfigTrust`: owned by you or root, writable by
/// nobody else), or loading fails; an untrusted file is never skipped for the next one.
/// Lua rather than JSON: comments, and the same syntax as recipes.
public struct HubConfig: Sendable {
    /// Where the file was found; nil when there is none (the built-in sandbox is used).
    public var source: URL?
    public var defaultProfile: String?
    public var profiles: [String: ProfileSetting]

    /// A profile: a real Hub, or the built-in sandbox.
    public enum ProfileSetting: Sendable, Equatable {
        case hub(HubProfile)
        case sandbox
    }

    public static let empty = HubConfig(source: nil, defaultProfile: nil, profiles: [:])
    public static let builtinSandboxName = "sandbox"

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

    /// The profile named `name`, or the default one: `--profile`, then
    /// `default_profile`, then the only profile, then the built-in sandbox.
    public func profile(named name: String?) throws -> (name: String, setting: ProfileSetting) {
        if let name {
            if let setting = profiles[name] { return (name, setting) }
            if name == Self.builtinSandboxName { return (name, .sandbox) }
            let known = profiles.keys.sorted().joined(separator: ", ")
            throw HubConfigError("no profile '\(name)' in \(source?.path ?? "the configuration") (profiles: \(known.isEmpty ? "none" : known), or 'sandbox')")
        }
        if let d = defaultProfile {
            guard let setting = profiles[d] else { throw HubConfigError("default_profile '\(d)' is not one of the profiles") }
            return (d, setting)
        }
        if profiles.count == 1, let only = profiles.first { return (only.key, only.value) }
        if profiles.isEmpty { return (Self.builtinSandboxName, .sandbox) }
        throw HubConfigError("\(source?.path ?? "the configuration") has several profiles and no default_profile; pass --profile NAME")
    }
}
