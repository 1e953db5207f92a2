import DispatchClient
import Foundation
import HubClient
import ScriptHost
import Secrets
import RecipeModules

/// `dispatch_targets`: the named Dispatch servers a recipe may reach, each with the one
/// credential it carries. The configuration binds a secret to a destination; a recipe
/// only names the destination (`dispatch.connect("ops")`), so a shared recipe can never
/// carry a token to a URL of its choosing.
extension ConfigParser {
    static let targetKeys = ["url", "token_ref"]

    /// The targets in `value` (`{ ops = { url = …, token_ref = … } }`), `at` naming it in messages.
    func dispatchTargets(_ value: ScriptValue?, at path: String) throws -> [String: DispatchTargetSetting] {
        guard let value else { return [:] }
        if case .array(let a) = value, a.isEmpty { return [:] }
        guard case .object(let specs) = value else {
            throw fail("\(path) must be a table of name = { url = \"https://…\", token_ref = \"VAULT_ENTRY\" }")
        }
        var targets: [String: DispatchTargetSetting] = [:]
        for (name, spec) in specs.sorted(by: { $0.key < $1.key }) {
            guard RecipeManifest.isTargetName(name) else {
                throw fail("\(path): '\(TerminalText.field(name))' is not a target name (1–64 letters, digits, _ or -, starting with a letter or digit)")
            }
            let at = "\(path).\(name)"
            guard case .object(let f) = spec else {
                throw fail("\(at) must be a table like { url = \"https://dispatch.example.com\", token_ref = \"dispatch/\(name)\" }")
            }
            if let bad = f.keys.sorted().first(where: { !Self.targetKeys.contains($0) }) {
                throw fail("unknown key '\(TerminalText.field(bad))' in \(at) (allowed: \(Self.targetKeys.joined(separator: ", ")))")
            }
            guard let text = f["url"]?.stringValue, !text.isEmpty else {
                throw fail("\(at).url is required: the Dispatch server's base URL, e.g. \"https://dispatch.example.com\"")
            }
            guard let url = URL(string: text), url.scheme != nil, url.host != nil else { throw fail("\(at).url is not a URL") }
            do { try DispatchClient.checkURL(url) } catch let error as DispatchError { throw fail("\(at).url: \(error.message)") }
            guard let ref = f["token_ref"]?.stringValue, !ref.isEmpty else {
                throw fail("\(at).token_ref is required: the vault entry holding this Dispatch's machine token (e.g. \"dispatch/\(name)\"), or \"env:NAME\"")
            }
            targets[name] = DispatchTargetSetting(url: url, tokenRef: ref)
        }
        return targets
    }

    /// Refuses a Dispatch credential (a target's `token_ref`, a profile's
    /// `dispatch_token_ref`) that is not a Dispatch token: a `hubscript login` session,
    /// a webhook signing secret, a profile's API key, an API key a recipe stored, the
    /// vault's own key or the journal's password. A recipe can make Dispatch carry its
    /// credential, so none of those may ever be one.
    func checkDispatchCredentials(_ config: HubConfig, triggers: ScriptValue?) throws {
        var reserved: [String: String] = [:]
        for (name, setting) in config.profiles.sorted(by: { $0.key < $1.key }) {
            guard case .hub(let p) = setting, case .apiKey(let source) = p.auth else { continue }
            switch source {
            case .reference(let ref): reserved[ref] = reserved[ref] ?? "the API key of profile '\(name)' (api_key_ref)"
            case .environment(let env): reserved["env:\(env)"] = reserved["env:\(env)"] ?? "the API key of profile '\(name)' (api_key_env)"
            case .literal: break
            }
        }
        if case .object(let all) = triggers {
            for (name, spec) in all.sorted(by: { $0.key < $1.key }) {
                if let secret = spec["secret"].stringValue { reserved[secret] = reserved[secret] ?? "the webhook signing secret of trigger '\(name)'" }
            }
        }
        for variable in Self.reservedVariables { reserved["env:\(variable.name)"] = variable.why }

        func check(_ ref: String, at path: String) throws {
            let why: String? = if let known = reserved[ref] {
                known
            } else if ref.hasPrefix(VaultCredentialStore.entryPrefix) {
                "where `hubscript login` keeps a profile's session"
            } else if ref.hasPrefix(Bindings.keySecretPrefix) {
                "where hub.api_keys.create keeps the API keys recipes create"
            } else {
                nil
            }
            guard let why else { return }
            throw fail("\(path) = \"\(TerminalText.field(ref))\" is \(why): a recipe can make Dispatch carry its token, so it may never be a session, a webhook signing secret, an API key or a key of hubscript's own. Keep Dispatch's machine token in its own vault entry (hubscript vault set dispatch/NAME) and name that")
        }
        for (name, target) in config.dispatchTargets.sorted(by: { $0.key < $1.key }) {
            try check(target.tokenRef, at: "dispatch_targets.\(name).token_ref")
        }
        for (name, setting) in config.profiles.sorted(by: { $0.key < $1.key }) {
            guard case .hub(let p) = setting else { continue }
            if let ref = p.dispatchTokenRef { try check(ref, at: "profiles.\(name).dispatch_token_ref") }
            for (target, spec) in p.dispatchTargets.sorted(by: { $0.key < $1.key }) {
                try check(spec.tokenRef, at: "profiles.\(name).dispatch_targets.\(target).token_ref")
            }
        }
    }

    /// Environment variables that hold hubscript's own keys, never a Dispatch token.
    static let reservedVariables: [(name: String, why: String)] = [
        ("HUBSCRIPT_VAULT_KEY", "the vault's key"), ("HUBSCRIPT_VAULT_PASSPHRASE", "the vault's passphrase"),
        ("HUBSCRIPT_VAULT_NEW_KEY", "the vault's new key"), ("HUBSCRIPT_VAULT_NEW_PASSPHRASE", "the vault's new passphrase"),
        ("PGPASSWORD", "the journal database's password"),
    ]
}
