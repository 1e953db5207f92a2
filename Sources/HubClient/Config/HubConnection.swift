import Foundation
import HTTPKit

/// A client for the chosen profile, ready for a command: a real Hub over HTTPS
/// (`LiveTransport`, credentials in the state directory), or the built-in sandbox Hub
/// in process, stored in the state directory so consecutive runs see each other's
/// changes. This module does not know the sandbox: the caller (the CLI) hands it in as
/// an `EmbeddedHubOpener`.
public final class HubConnection: Sendable {
    public let profileName: String
    public let client: HubClient
    /// One line to tell the user, when the built-in sandbox is used for lack of a config.
    public let notice: String?
    /// One line suggesting the vault, when the profile's API key is in plain text
    /// (`api_key` or `api_key_env`) of a Hub that is not on this machine; the caller shows
    /// it once per process.
    public let hint: String?
    /// What to call the profile's API key where it is masked (`$HUB_KEY`, `api_key of
    /// profile 'prod'`, the vault entry's name); nil for the built-in sandbox's published
    /// key and for a user session.
    public let apiKeyName: String?

    init(profileName: String, client: HubClient, notice: String?, hint: String? = nil, apiKeyName: String? = nil) {
        self.profileName = profileName
        self.client = client
        self.notice = notice
        self.hint = hint
        self.apiKeyName = apiKeyName
    }

    /// The name `apiKeyName` gives the API key `source` of profile `profile`.
    static func apiKeyName(_ source: HubProfile.SecretSource, profile: String) -> String {
        switch source {
        case .environment(let variable): "$\(variable)"
        case .literal: "api_key of profile '\(profile)'"
        case .reference(let entry): entry
        }
    }

    /// The hint for a profile whose API key is in the config file or the environment.
    public static func plainKeyHint(profile: String) -> String {
        "hubscript: hint: profile '\(profile)' has its API key in plain text; store it encrypted with `hubscript vault set hub/\(profile)` and set api_key_ref = \"hub/\(profile)\""
    }

    /// Opens the profile `name` (or the default) of `config`; a `sandbox` profile talks
    /// to the Hub `embeddedHub` opens. `credentialStore` keeps session profiles'
    /// refresh tokens (default: files in the state directory); `secrets` reads the
    /// vault entries profiles name (`api_key_ref`).
    public static func open(config: HubConfig, profile name: String?, state: StateDirectory,
                            embeddedHub: any EmbeddedHubOpener,
                            credentialStore: (any CredentialStore)? = nil,
                            secrets: (any HubSecretLookup)? = nil,
                            warn: @escaping @Sendable (String) -> Void = HubClientOptions.standardErrorWarn,
                            observe: (@Sendable (HubClientEvent) -> Void)? = nil) throws -> HubConnection {
        let (profileName, setting) = try config.profile(named: name)
        var options = HubClientOptions()
        options.warn = warn
        options.observe = observe
        switch setting {
        case .sandbox:
            // The opener's transport opens the Hub on the first request, so a recipe that
            // never calls the Hub does not pay for opening (or seeding) the sandbox.
            options.rateLimitPerMinute = 0
            options.profileName = profileName
            options.apiKeyID = embeddedHub.apiKeyID
            let client = try HubClient(
                baseURL: URL(string: "http://localhost")!, credential: .apiKey(embeddedHub.apiKeySecret),
                transport: embeddedHub.transport(state: state), options: options)
            let notice = config.source == nil
                ? "hubscript: no configuration found; using the built-in sandbox Hub (\(try state.sandboxFilePath)). See README, \"Profiles\"."
                : nil
            return HubConnection(profileName: profileName, client: client, notice: notice)
        case .hub(let profile):
            let store = try credentialStore ?? FileCredentialStore(directory: try state.credentials)
            if let readerName = profile.apiKeyRecordProfile {
                options.apiKeyRecordReader = try keyRecordReader(config: config, profile: profile.name, reader: readerName,
                                                                 store: store, options: options)
            }
            let trust = try TLSTrust.resolve(profile: profileName, caFile: profile.caFile)
            let client = try HubClient(profile: profile, credentialStore: store, transport: LiveTransport(trust: trust),
                                       secrets: secrets, options: options)
            var hint: String?
            // A Hub on this machine (a served sandbox, a tunnel) is a developer's: no hint.
            let local = profile.hubURL.host.map(HubTransportPolicy.isLoopback) ?? false
            if case .apiKey(let source) = profile.auth, source.isPlain, !local { hint = plainKeyHint(profile: profileName) }
            var keyName: String?
            if case .apiKey(let source) = profile.auth { keyName = apiKeyName(source, profile: profileName) }
            return HubConnection(profileName: profileName, client: client, notice: nil, hint: hint, apiKeyName: keyName)
        }
    }
}

extension HubConnection {
    /// Reads API key records (`GET /api-keys/{id}`) with the user session of the profile
    /// `reader` (a profile's `api_key_record_profile`). Throws `configuration_error` when
    /// `reader` is not a profile that signs in as a user.
    static func keyRecordReader(config: HubConfig, profile: String, reader: String, store: any CredentialStore,
                                options: HubClientOptions) throws -> @Sendable (String) throws -> HubResponse {
        let setting = try? config.profile(named: reader).1
        guard case .hub(let readerProfile)? = setting, case .session = readerProfile.auth else {
            throw HubError(code: HubError.Code.configuration,
                           message: "profile \(profile): api_key_record_profile = \"\(reader)\" must name a profile that signs in as a user (email = …)",
                           hint: "Add a profile with hub_url and email, sign in with hubscript login --profile NAME, and name it here.")
        }
        var readerOptions = options
        readerOptions.apiKeyRecordReader = nil
        let client = try HubClient(profile: readerProfile, credentialStore: store, transport: LiveTransport(), options: readerOptions)
        return { id in try client.get("/api-keys/\(id)") }
    }
}

/// The built-in sandbox Hub as the client sees it: a transport and the API key to send.
/// The CLI provides it (it composes the sandbox with the client); neither this module
/// nor the recipe modules depend on the sandbox.
public protocol EmbeddedHubOpener: Sendable {
    /// The id and secret of the API key the built-in profile uses.
    var apiKeyID: String { get }
    var apiKeySecret: String { get }
    /// A transport to the embedded Hub kept in `state`. It must open nothing yet: the
    /// Hub is opened (created and seeded if need be) on the transport's first request,
    /// and if that fails every request is answered `503 service_unavailable`.
    func transport(state: StateDirectory) -> any HubTransport
}
