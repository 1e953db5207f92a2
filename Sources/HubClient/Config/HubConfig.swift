import Foundation

/// The configuration: profiles (and, later, jobs), and which one a command uses.
///
/// It comes from a data-only Lua file, evaluated in an empty sandbox, that returns a
/// table (read once per command by `LoadedConfiguration.load` in Configuration, which has the Lua; this module has none):
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
    /// The top-level `dispatch_targets`: named Dispatch servers a recipe may reach with
    /// `dispatch.connect(NAME)`, for every profile (a profile's own targets of the same
    /// name take their place).
    public var dispatchTargets: [String: DispatchTargetSetting] = [:]

    /// A profile: a real Hub, or the built-in sandbox.
    public enum ProfileSetting: Sendable, Equatable {
        case hub(HubProfile)
        case sandbox
    }

    public init(source: URL?, defaultProfile: String?, profiles: [String: ProfileSetting]) {
        self.source = source
        self.defaultProfile = defaultProfile
        self.profiles = profiles
    }

    /// The Dispatch targets profile `name` offers: the top-level ones, with the profile's
    /// own (`profiles.NAME.dispatch_targets`) in place of those of the same name.
    public func dispatchTargets(profile name: String) -> [String: DispatchTargetSetting] {
        guard case .hub(let profile)? = profiles[name] else { return dispatchTargets }
        return dispatchTargets.merging(profile.dispatchTargets) { _, own in own }
    }

    public static let empty = HubConfig(source: nil, defaultProfile: nil, profiles: [:])
    public static let builtinSandboxName = "sandbox"

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

/// A named Dispatch server of the configuration (`dispatch_targets = { ops = { url = …,
/// token_ref = … } }`): where a recipe's `dispatch.connect("ops")` sends, and which
/// credential goes with it. The recipe names the target; only the configuration binds a
/// secret to a URL.
public struct DispatchTargetSetting: Sendable, Equatable, Codable {
    /// The Dispatch base URL (`https://`, or `http://` to loopback).
    public var url: URL
    /// The vault entry holding the machine token, or `env:NAME` for an environment variable.
    public var tokenRef: String

    public init(url: URL, tokenRef: String) {
        self.url = url
        self.tokenRef = tokenRef
    }

    enum CodingKeys: String, CodingKey { case url, tokenRef = "token_ref" }
}
