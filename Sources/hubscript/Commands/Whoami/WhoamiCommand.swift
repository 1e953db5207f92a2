import Foundation
import HubClient
import ScriptHost
import SystemText
import Runs

/// `hubscript whoami [--profile P] [--json]`: who the profile is at its Hub, what it may
/// do, where it talks to, the rate limit the Hub reported, and where its secrets come
/// from (never a secret itself). Reads only.
struct WhoamiCommand: Command {
    static let configuration = CommandConfiguration(
        name: "whoami", abstract: "Show who a profile is at its Hub, what it may do, and where its secrets come from.",
        usage: "[--profile P] [--json]",
        options: [OptionSpec(name: "json", valueName: nil, help: "Print one JSON object instead of lines.")] + CommonOptions.specs,
        discussion: """
        Reads, never writes: the user (id, email, name, roles) of a login session, or the API
        key (id, name, owner, status) of a key profile; its permissions and where they come
        from (the user's Capabilities, the key's record, or the profile's api_key_permissions);
        the Hub's URL and API version; the rate limit the Hub's answers reported; and where
        the credential comes from (a vault entry, an environment variable, the configuration
        file, a login session) — never the secret itself.

        Exit codes: 0, 2 a configuration mistake, 3 the Hub refuses the credential (an API
        key unknown or revoked, a session that ended), 7 the Hub could not be reached.
        """)

    let common: CommonOptions.Values
    let json: Bool

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.isEmpty else {
            throw UsageError("whoami takes no arguments (did you mean --profile \(TerminalText.field(arguments.positionals[0]))?)")
        }
        common = try CommonOptions.Values(arguments)
        json = arguments.flag("json")
    }

    func run() throws -> Int32 {
        let (profileName, setting) = try common.hub.profile(named: common.profile)
        let witness = HubReachWitness()
        let connection = try common.connect(quiet: true, observe: witness.observer(then: nil))
        let reach = HubReachContext(common: common, profile: profileName, witness: witness)
        let identity: HubIdentity
        do {
            identity = try HubIdentity.read(connection)
        } catch let error as HubError {
            if let failure = reach.failure(for: error) { return Self.fail(failure.description, code: failure.code, exit: failure.exitCode, json: json) }
            return Self.fail("profile '\(profileName)': \(error)", code: error.code, exit: ExitCode.recipeFailed, json: json)
        }
        let origin = CredentialOrigin.of(setting, configPath: common.hub.source?.path)
        let about = ProfileFacts(profile: profileName, setting: setting, common: common)
        if json {
            Console.out(try JSONCodec.encode(Self.object(identity, about: about, origin: origin)) + "\n")
        } else {
            Console.out(Self.lines(identity, about: about, origin: origin))
        }
        return ExitCode.success
    }

    /// Reports a failure on stderr (and as a JSON object on stdout with `--json`).
    static func fail(_ message: String, code: String, exit: Int32, json: Bool) -> Int32 {
        if json {
            let object: ScriptValue = .object(["error": .object(["code": .string(code), "message": .string(message)]),
                                               "exit_code": .integer(Int64(exit))])
            Console.out(((try? JSONCodec.encode(object)) ?? "{}") + "\n")
        }
        // One line: the message holds the Hub's words, which must not start lines of their own.
        Console.err("hubscript whoami: \(TerminalText.line(message))\n")
        return exit
    }

    /// What the configuration says about the profile (no Hub call).
    struct ProfileFacts {
        let profile: String
        let hubURL: String
        let apiPrefix: String
        let paceLimit: Int?
        let dispatchSecret: String?

        init(profile: String, setting: HubConfig.ProfileSetting, common: CommonOptions.Values) {
            self.profile = profile
            switch setting {
            case .sandbox:
                hubURL = "the built-in sandbox in " + ((try? common.state.sandboxFilePath) ?? "the state directory")
                apiPrefix = ""
                paceLimit = 0
                dispatchSecret = "the built-in sandbox's machine token"
            case .hub(let p):
                hubURL = p.hubURL.absoluteString
                apiPrefix = p.apiPrefix
                paceLimit = p.rateLimitPerMinute
                dispatchSecret = p.dispatchTokenRef.map(Self.tokenPhrase)
            }
        }

        /// `dispatch_token_ref`: `env:NAME` or a vault entry.
        static func tokenPhrase(_ ref: String) -> String {
            ref.hasPrefix("env:") ? "the environment variable $\(ref.dropFirst(4)) (dispatch_token_ref)"
                : "the vault entry \(ref) (dispatch_token_ref)"
        }
    }

    static func lines(_ identity: HubIdentity, about: ProfileFacts, origin: CredentialOrigin) -> String {
        let f = TerminalText.field
        var rows: [(String, String)] = [("profile", f(about.profile))]
        rows.append(("hub", f(about.hubURL) + " (API version 1" + (about.apiPrefix.isEmpty ? "" : ", paths under \(f(about.apiPrefix))") + ")"))
        if identity.kind == "user" {
            var who = "user \(f(identity.id ?? "?"))"
            if let email = identity.email { who += " <\(f(email))>" }
            if let name = identity.name { who += " \"\(f(name))\"" }
            if let status = identity.status { who += ", \(f(status))" }
            rows.append(("who", who))
            rows.append(("roles", identity.roles.map(f).joined(separator: ", ")))
        } else {
            var who = "API key " + (identity.id.map(f) ?? "(its id is not in the profile: set api_key_id to read its record)")
            if let name = identity.name { who += " \"\(f(name))\"" }
            if let owner = identity.owner { who += ", owned by \(f(owner))" }
            if let status = identity.status { who += ", \(f(status))" }
            rows.append(("who", who))
        }
        let known = identity.permissionsSource != Capabilities.Source.apiKeyUnknown.rawValue
            && identity.permissionsSource != Capabilities.Source.apiKeyHubGate.rawValue
        let may = identity.permissions.isEmpty ? "nothing" : identity.permissions.map(f).joined(separator: ", ")
        rows.append(("may", known ? may + " (" + permissionsSourcePhrase(identity.permissionsSource) + ")"
                                  : permissionsSourcePhrase(identity.permissionsSource)))
        if let note = identity.permissionsNote { rows.append(("", f(note))) }
        rows.append(("rate limit", rateLimitPhrase(identity.rateLimit, pace: about.paceLimit)))
        rows.append(("credential", origin.phrase))
        if let dispatch = about.dispatchSecret { rows.append(("dispatch", "token from " + dispatch)) }
        let width = rows.map(\.0.count).max() ?? 0
        return rows.map { $0.0.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + $0.1 + "\n" }.joined()
    }

    static func permissionsSourcePhrase(_ source: String) -> String {
        switch source {
        case Capabilities.Source.userSession.rawValue: "the user's Capabilities"
        case Capabilities.Source.apiKeyRecord.rawValue: "the key's record"
        case Capabilities.Source.apiKeyDeclared.rawValue: "the profile's api_key_permissions"
        case Capabilities.Source.apiKeyHubGate.rawValue: "not known; gate = \"hub\": the Hub decides each call"
        default: "not known: declare them in the profile (api_key_permissions; hubscript keys show KEY_ID prints the line), "
            + "or name the key with api_key_id to read its record"
        }
    }

    static func rateLimitPhrase(_ seen: HubIdentity.RateLimitSeen?, pace: Int?) -> String {
        let own: String
        switch pace {
        case 0?: own = "no pacing of its own"
        case let n?: own = "the profile paces at \(n) a minute"
        case nil: own = "the profile paces by what the Hub reports"
        }
        guard let seen else { return "none reported by the Hub's answers; \(own)" }
        var text = "\(seen.limit) a minute"
        if let remaining = seen.remaining { text += ", \(remaining) left" }
        if let reset = seen.resetSeconds { text += ", full again in \(DecimalText.fixed(reset, 0)) s" }
        return text + " (the Hub's last answer); " + own
    }

    static func object(_ identity: HubIdentity, about: ProfileFacts, origin: CredentialOrigin) -> ScriptValue {
        func optional(_ s: String?) -> ScriptValue { s.map(ScriptValue.string) ?? .null }
        var who: [String: ScriptValue] = ["kind": .string(identity.kind), "id": optional(identity.id), "status": optional(identity.status)]
        if identity.kind == "user" {
            who["email"] = optional(identity.email)
            who["name"] = optional(identity.name)
            who["roles"] = .array(identity.roles.map(ScriptValue.string))
        } else {
            who["name"] = optional(identity.name)
            who["owner"] = optional(identity.owner)
        }
        var rate: ScriptValue = .null
        if let seen = identity.rateLimit {
            rate = .object(["limit": .integer(Int64(seen.limit)), "remaining": seen.remaining.map { .integer(Int64($0)) } ?? .null,
                            "reset_seconds": seen.resetSeconds.map(ScriptValue.number) ?? .null])
        }
        var credential: [String: ScriptValue] = ["source": .string(origin.kind)]
        switch origin {
        case .vaultEntry(let entry): credential["vault_entry"] = .string(entry)
        case .environment(let variable): credential["environment_variable"] = .string(variable)
        case .configFile(let path): credential["config_file"] = optional(path)
        case .session(let email): credential["email"] = .string(email)
        case .builtinSandbox: break
        }
        return .object([
            "profile": .string(about.profile), "hub_url": .string(about.hubURL), "api_version": .string("1"),
            "api_prefix": .string(about.apiPrefix), "who": .object(who),
            "permissions": .array(identity.permissions.map(ScriptValue.string)),
            "permissions_source": .string(identity.permissionsSource),
            "permissions_note": optional(identity.permissionsNote),
            "rate_limit": rate, "rate_limit_per_minute": about.paceLimit.map { .integer(Int64($0)) } ?? .null,
            "credential": .object(credential), "dispatch_token": optional(about.dispatchSecret),
        ])
    }
}
