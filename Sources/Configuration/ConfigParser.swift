import DispatchClient
import Foundation
import HubClient
import ScriptHost

/// Turns the config file's value into `HubConfig`, naming the key of every mistake.
struct ConfigParser {
    let file: String

    /// `jobs` is read by `JobsConfigParser` (for `hubscript jobs`), `triggers` by
    /// `TriggersConfigParser` (for `hubscript listen`), `libraries` by `LibrariesConfig`,
    /// `journal` by `JournalConfig`, not here.
    static let topKeys = ["default_profile", "profiles", "dispatch_targets", "jobs", "triggers", "libraries", "journal", "approvals", "retention"]
    static let profileKeys = ["sandbox", "hub_url", "api_prefix", "email", "api_key", "api_key_env", "api_key_ref", "api_key_id",
                              "api_key_permissions", "rate_limit_per_minute", "dispatch_url", "dispatch_token_ref",
                              "dispatch_targets", "api_key_record_profile", "gate", "ca_file"]

    func fail(_ message: String) -> HubConfigError { HubConfigError("config \(file): \(message)") }

    func parse(_ value: ScriptValue, source: URL) throws -> HubConfig {
        guard case .object(let top) = value else { throw fail("must return a table, e.g. return { profiles = { … } }") }
        try rejectUnknown(top, Self.topKeys, "the top level")
        var config = HubConfig(source: source, defaultProfile: nil, profiles: [:])
        if let d = top["default_profile"] {
            guard let name = d.stringValue else { throw fail("default_profile must be a string") }
            config.defaultProfile = name
        }
        if let p = top["profiles"] {
            guard case .object(let profiles) = p else { throw fail("profiles must be a table of name = { … }") }
            for (name, spec) in profiles {
                config.profiles[name] = try profile(name, spec)
            }
            try checkRecordProfiles(config.profiles)
        }
        config.dispatchTargets = try dispatchTargets(top["dispatch_targets"], at: "dispatch_targets")
        try checkDispatchCredentials(config, triggers: top["triggers"])
        return config
    }

    private func rejectUnknown(_ fields: [String: ScriptValue], _ allowed: [String], _ context: String) throws {
        if let bad = fields.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw fail("unknown key '\(bad)' in \(context) (allowed: \(allowed.joined(separator: ", ")))")
        }
    }

    private func string(_ fields: [String: ScriptValue], _ key: String, _ name: String) throws -> String? {
        guard let v = fields[key] else { return nil }
        guard let s = v.stringValue, !s.isEmpty else { throw fail("profiles.\(name).\(key) must be a non-empty string") }
        return s
    }

    private func profile(_ name: String, _ spec: ScriptValue) throws -> HubConfig.ProfileSetting {
        guard case .object(let f) = spec else { throw fail("profiles.\(name) must be a table") }
        try rejectUnknown(f, Self.profileKeys, "profiles.\(name)")
        if case .bool(true)? = f["sandbox"] {
            guard f.count == 1 else { throw fail("profiles.\(name): a sandbox profile takes no other keys") }
            return .sandbox
        }
        guard let urlText = try string(f, "hub_url", name), let url = URL(string: urlText), url.scheme != nil else {
            throw fail("profiles.\(name).hub_url is required (e.g. \"https://api.substratalapps.com\"), or set sandbox = true")
        }
        // The URL is shown by whoami, doctor, apply's question and failure messages, and
        // journalled with them; the Hub authenticates by the profile's key or session.
        if url.user != nil || url.password != nil {
            throw fail("profiles.\(name).hub_url holds a user or password before '@'; remove it (the credential goes in "
                       + "api_key_ref, api_key_env or email: the URL is shown in messages and recorded in the journal)")
        }
        let auth: HubProfile.Auth
        switch (try string(f, "email", name), try string(f, "api_key_ref", name), try string(f, "api_key_env", name),
                try string(f, "api_key", name)) {
        case (let email?, nil, nil, nil): auth = .session(email: email)
        case (nil, let ref?, nil, nil): auth = .apiKey(.reference(ref))
        case (nil, nil, let env?, nil): auth = .apiKey(.environment(env))
        case (nil, nil, nil, let secret?): auth = .apiKey(.literal(secret))
        default:
            throw fail("profiles.\(name) needs exactly one of email (a user session: hubscript login), api_key_ref (the vault entry holding an API key), api_key_env (the variable holding it, for CI) or api_key")
        }
        var rate: Int?
        if let r = f["rate_limit_per_minute"] {
            guard let i = r.intValue, i >= 0 else { throw fail("profiles.\(name).rate_limit_per_minute must be a whole number ≥ 0 (0 = no pacing)") }
            rate = Int(i)
        }
        let permissions = try apiKeyPermissions(f, name)
        let gate = try hubIsOnlyGate(f, name)
        let recordProfile = try string(f, "api_key_record_profile", name)
        let isKey: Bool
        if case .apiKey = auth { isKey = true } else { isKey = false }
        for key in ["api_key_permissions", "api_key_id", "api_key_record_profile", "gate"] where !isKey && f[key] != nil {
            throw fail("profiles.\(name).\(key) applies to an API key profile; this profile signs in as a user (email), whose permissions the Hub tells")
        }
        if recordProfile != nil && f["api_key_id"] == nil {
            throw fail("profiles.\(name).api_key_record_profile reads the record of the key api_key_id names; set api_key_id = \"key_…\" too")
        }
        if gate && permissions != nil {
            throw fail("profiles.\(name) declares api_key_permissions and gate = \"hub\": the declared permissions gate the run; remove one")
        }
        var dispatch: URL?
        if let d = try string(f, "dispatch_url", name) {
            guard let u = URL(string: d), u.scheme != nil else { throw fail("profiles.\(name).dispatch_url is not a URL") }
            do { try DispatchClient.checkCarriesNoCredential(u) } catch let error as DispatchError { throw fail("profiles.\(name).dispatch_url: \(error.message)") }
            dispatch = u
        }
        // A relative ca_file is relative to the configuration file's folder; whether it
        // holds certificates is checked when the profile connects (TLSTrust), so a
        // missing bundle stops only that profile's runs.
        let caFile = try string(f, "ca_file", name).map { path in
            path.hasPrefix("/") ? path : URL(fileURLWithPath: file).deletingLastPathComponent().appendingPathComponent(path).standardizedFileURL.path
        }
        var hub = HubProfile(
            name: name, hubURL: url, apiPrefix: try string(f, "api_prefix", name) ?? "", auth: auth,
            rateLimitPerMinute: rate, apiKeyPermissions: permissions, apiKeyID: try apiKeyID(f, name),
            dispatchURL: dispatch, dispatchTokenRef: try string(f, "dispatch_token_ref", name), caFile: caFile)
        hub.apiKeyRecordProfile = recordProfile
        hub.hubIsOnlyGate = gate
        hub.dispatchTargets = try dispatchTargets(f["dispatch_targets"], at: "profiles.\(name).dispatch_targets")
        return .hub(hub)
    }
}
