import Foundation
import SystemText

/// One named connection: which Hub, how to authenticate, how fast to go, and where
/// Dispatch is. The configuration file holds a list of these (its loader lives
/// elsewhere); JSON/Codable keys are snake_case as in the config file.
public struct HubProfile: Sendable, Codable, Equatable {
    /// How the profile authenticates.
    public enum Auth: Sendable, Equatable {
        /// A user session for `email`; `hubscript login --profile <name>` stores it.
        case session(email: String)
        /// A platform API key: a vault entry (`api_key_ref`), or for CI an environment
        /// variable (`api_key_env`) or the key itself (`api_key`).
        case apiKey(SecretSource)
    }

    /// Where a secret comes from. Inline secrets are for tests and the sandbox only.
    public enum SecretSource: Sendable, Equatable {
        case literal(String)
        case environment(String)
        /// The name of a vault entry (`hub/prod-key`), read through a `HubSecretLookup`.
        case reference(String)

        /// Whether the secret sits in plain text (the config file or the environment).
        public var isPlain: Bool {
            if case .reference = self { return false }
            return true
        }
    }

    /// The profile's name (`--profile`), also the credential store key.
    public var name: String
    /// The Hub base URL, e.g. `https://api.substratalapps.com`. HTTPS, or HTTP on loopback.
    public var hubURL: URL
    /// Path prefix for older deployments (`/v1`); empty for none.
    public var apiPrefix: String
    public var auth: Auth
    /// The most requests a minute the client sends (`rate_limit_per_minute`); it paces
    /// under the lower of this and what the Hub reports. nil (not set): only what the
    /// Hub reports. 0 turns pacing off.
    public var rateLimitPerMinute: Int?
    /// For API keys: the permissions the key holds, as declared by whoever set up the
    /// profile (the Hub offers no self-introspection; `hubscript keys show` prints the
    /// line). nil = not declared: unknown, never assumed; see `HubClient.capabilities()`.
    public var apiKeyPermissions: [String]?
    /// For API keys: the key's id (`key_…`); when set, capabilities are read from
    /// `GET /api-keys/{id}`, with the session of `apiKeyRecordProfile` if set.
    public var apiKeyID: String?
    /// For API keys with an `apiKeyID`: the profile (a user session) whose credential
    /// reads the key's record; nil: the key asks for its own (the sandbox answers, the
    /// Hub does not).
    public var apiKeyRecordProfile: String?
    /// For API keys whose permissions are not known: `gate = "hub"` in the config, the
    /// explicit choice to run anyway and let the Hub's 403s be the only gate.
    public var hubIsOnlyGate: Bool = false
    /// The Dispatch relay's base URL, if the profile sends notifications through it.
    public var dispatchURL: URL?
    /// The vault secret name holding Dispatch's machine token (e.g. `dispatch/ci`).
    public var dispatchTokenRef: String?
    /// This profile's own named Dispatch targets (`dispatch_targets`), beside the
    /// configuration's top-level ones (see `HubConfig.dispatchTargets(profile:)`).
    public var dispatchTargets: [String: DispatchTargetSetting] = [:]
    /// `ca_file`: a PEM bundle of the CAs this profile's Hub and Dispatch connections
    /// trust, instead of the system store (an absolute path; `TLSTrust`).
    public var caFile: String?

    public init(name: String, hubURL: URL, apiPrefix: String = "", auth: Auth, rateLimitPerMinute: Int? = nil,
                apiKeyPermissions: [String]? = nil, apiKeyID: String? = nil, dispatchURL: URL? = nil, dispatchTokenRef: String? = nil,
                caFile: String? = nil) {
        self.caFile = caFile
        self.name = name
        self.hubURL = hubURL
        self.apiPrefix = apiPrefix
        self.auth = auth
        self.rateLimitPerMinute = rateLimitPerMinute
        self.apiKeyPermissions = apiKeyPermissions
        self.apiKeyID = apiKeyID
        self.dispatchURL = dispatchURL
        self.dispatchTokenRef = dispatchTokenRef
    }

    enum CodingKeys: String, CodingKey {
        case name, auth
        case hubURL = "hub_url", apiPrefix = "api_prefix", rateLimitPerMinute = "rate_limit_per_minute"
        case apiKeyPermissions = "api_key_permissions", apiKeyID = "api_key_id", dispatchURL = "dispatch_url", dispatchTokenRef = "dispatch_token_ref"
        case apiKeyRecordProfile = "api_key_record_profile", hubIsOnlyGate = "hub_is_only_gate"
        case dispatchTargets = "dispatch_targets"
        case caFile = "ca_file"
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        hubURL = try c.decode(URL.self, forKey: .hubURL)
        apiPrefix = try c.decodeIfPresent(String.self, forKey: .apiPrefix) ?? ""
        auth = try c.decode(Auth.self, forKey: .auth)
        rateLimitPerMinute = try c.decodeIfPresent(Int.self, forKey: .rateLimitPerMinute)
        apiKeyPermissions = try c.decodeIfPresent([String].self, forKey: .apiKeyPermissions)
        apiKeyID = try c.decodeIfPresent(String.self, forKey: .apiKeyID)
        dispatchURL = try c.decodeIfPresent(URL.self, forKey: .dispatchURL)
        dispatchTokenRef = try c.decodeIfPresent(String.self, forKey: .dispatchTokenRef)
        apiKeyRecordProfile = try c.decodeIfPresent(String.self, forKey: .apiKeyRecordProfile)
        hubIsOnlyGate = try c.decodeIfPresent(Bool.self, forKey: .hubIsOnlyGate) ?? false
        dispatchTargets = try c.decodeIfPresent([String: DispatchTargetSetting].self, forKey: .dispatchTargets) ?? [:]
        caFile = try c.decodeIfPresent(String.self, forKey: .caFile)
    }
}

/// `{"kind":"session","email":…}`, `{"kind":"api_key","secret_ref":"hub/prod-key"}`,
/// `{"kind":"api_key","secret_env":"HUB_KEY"}` or `{"kind":"api_key","secret":"satk_test_…"}`.
extension HubProfile.Auth: Codable {
    enum CodingKeys: String, CodingKey { case kind, email, secret, secretEnv = "secret_env", secretRef = "secret_ref" }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        switch try c.decode(String.self, forKey: .kind) {
        case "session":
            self = .session(email: try c.decode(String.self, forKey: .email))
        case "api_key":
            if let ref = try c.decodeIfPresent(String.self, forKey: .secretRef) {
                self = .apiKey(.reference(ref))
            } else if let env = try c.decodeIfPresent(String.self, forKey: .secretEnv) {
                self = .apiKey(.environment(env))
            } else {
                self = .apiKey(.literal(try c.decode(String.self, forKey: .secret)))
            }
        case let other:
            throw DecodingError.dataCorruptedError(forKey: .kind, in: c,
                                                   debugDescription: "auth kind must be session or api_key, not \(other)")
        }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .session(let email):
            try c.encode("session", forKey: .kind)
            try c.encode(email, forKey: .email)
        case .apiKey(.environment(let name)):
            try c.encode("api_key", forKey: .kind)
            try c.encode(name, forKey: .secretEnv)
        case .apiKey(.literal(let secret)):
            try c.encode("api_key", forKey: .kind)
            try c.encode(secret, forKey: .secret)
        case .apiKey(.reference(let name)):
            try c.encode("api_key", forKey: .kind)
            try c.encode(name, forKey: .secretRef)
        }
    }
}

extension HubClient {
    /// A client for `profile`: its URL, prefix, pace and credential (API key from the
    /// environment when the profile names a variable, from `secrets` when it names a
    /// vault entry). `options` supplies the rest; the profile's fields override the
    /// matching options. Throws `configuration_error` when the API key's variable is
    /// unset or the profile names a vault entry and no `secrets` is given; what
    /// `secrets` throws passes through.
    public convenience init(profile: HubProfile, credentialStore: any CredentialStore, transport: any HubTransport,
                            environment: [String: String] = ProcessEnvironment.all,
                            secrets: (any HubSecretLookup)? = nil,
                            options: HubClientOptions = HubClientOptions()) throws {
        var options = options
        options.apiPrefix = profile.apiPrefix
        options.rateLimitPerMinute = profile.rateLimitPerMinute
        options.profileName = profile.name
        options.apiKeyPermissions = profile.apiKeyPermissions
        options.apiKeyID = profile.apiKeyID
        options.hubIsOnlyGate = profile.hubIsOnlyGate
        let credential: HubCredential
        switch profile.auth {
        case .session:
            credential = .session(profile: profile.name, store: credentialStore)
        case .apiKey(.literal(let secret)):
            credential = .apiKey(secret)
        case .apiKey(.environment(let name)):
            guard let secret = environment[name], !secret.isEmpty else {
                throw HubError(code: HubError.Code.configuration,
                               message: "Profile \(profile.name) reads its API key from $\(name), which is \(environment[name] == nil ? "not set" : "empty")",
                               hint: "Export \(name) with the API key secret, or change the profile's auth.")
            }
            credential = .apiKey(secret)
        case .apiKey(.reference(let name)):
            guard let secrets else {
                throw HubError(code: HubError.Code.configuration, message: "Profile \(profile.name) reads its API key from the vault entry '\(name)', and no vault is available here",
                               hint: "Run through hubscript (it opens the vault), or use api_key_env for CI.")
            }
            do { credential = .apiKey(try secrets.secret(named: name)) } catch let e as HubError {
                throw HubError(code: e.code, message: "Profile \(profile.name) reads its API key from the vault entry '\(name)': \(e.message)",
                               hint: e.hint)
            }
        }
        try self.init(baseURL: profile.hubURL, credential: credential, transport: transport, options: options)
    }
}

/// Reads a named secret (a profile's `api_key_ref`) for the client. The client does not
/// know where secrets live; the CLI hands in one backed by the vault.
///
/// Contract: returns the value of the entry `name`, after registering it with whatever
/// masks secrets in the process's output; throws an error whose description says what
/// to do (no vault, vault locked, no such entry).
public protocol HubSecretLookup: Sendable {
    func secret(named name: String) throws -> String
}
