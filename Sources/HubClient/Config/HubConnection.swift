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

    init(profileName: String, client: HubClient, notice: String?) {
        self.profileName = profileName
        self.client = client
        self.notice = notice
    }

    /// Opens the profile `name` (or the default) of `config`; a `sandbox` profile talks
    /// to the Hub `embeddedHub` opens.
    public static func open(config: HubConfig, profile name: String?, state: StateDirectory,
                            embeddedHub: any EmbeddedHubOpener,
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
                ? "hubscript: no configuration found; using the built-in sandbox Hub (\(try state.sandboxFile.path)). See README, \"Profiles\"."
                : nil
            return HubConnection(profileName: profileName, client: client, notice: notice)
        case .hub(let profile):
            let store = FileCredentialStore(directory: try state.credentials)
            let client = try HubClient(profile: profile, credentialStore: store, transport: LiveTransport(), options: options)
            return HubConnection(profileName: profileName, client: client, notice: nil)
        }
    }
}

/// The built-in sandbox Hub as the client sees it: a transport and the API key to send.
/// The CLI provides it (it composes the sandbox with the client); neither this module
/// nor HubBindings depends on the sandbox.
public protocol EmbeddedHubOpener: Sendable {
    /// The id and secret of the API key the built-in profile uses.
    var apiKeyID: String { get }
    var apiKeySecret: String { get }
    /// A transport to the embedded Hub kept in `state`. It must open nothing yet: the
    /// Hub is opened (created and seeded if need be) on the transport's first request,
    /// and if that fails every request is answered `503 service_unavailable`.
    func transport(state: StateDirectory) -> any HubTransport
}
