import Foundation
import HTTPKit
import HubSandbox
import ScriptHost

/// A client for the chosen profile, ready for a command: a real Hub over HTTPS
/// (`LiveTransport`, credentials in the state directory), or the built-in sandbox Hub
/// in process, stored in the state directory so consecutive runs see each other's
/// changes.
public final class HubConnection: Sendable {
    public let profileName: String
    public let client: HubClient
    /// The embedded sandbox, when the profile is the built-in one (opened on first use).
    public let sandbox: LazySandbox?
    /// One line to tell the user, when the built-in sandbox is used for lack of a config.
    public let notice: String?

    /// The credential the built-in sandbox profile uses: the sandbox's jobs key.
    public static let sandboxKeyID = SandboxFixtures.jobsKeyId

    init(profileName: String, client: HubClient, sandbox: LazySandbox?, notice: String?) {
        self.profileName = profileName
        self.client = client
        self.sandbox = sandbox
        self.notice = notice
    }

    /// Opens the profile `name` (or the default) of `config`.
    public static func open(config: HubConfig, profile name: String?, state: StateDirectory,
                            warn: @escaping @Sendable (String) -> Void = HubClientOptions.standardErrorWarn,
                            observe: (@Sendable (HubClientEvent) -> Void)? = nil) throws -> HubConnection {
        let (profileName, setting) = try config.profile(named: name)
        var options = HubClientOptions()
        options.warn = warn
        options.observe = observe
        switch setting {
        case .sandbox:
            // Opened on the first request, so a recipe that never calls the Hub does not
            // pay for opening (or seeding) the sandbox.
            let sandbox = LazySandbox { try openSandbox(state: state) }
            options.rateLimitPerMinute = 0
            options.profileName = profileName
            options.apiKeyID = sandboxKeyID
            let client = try HubClient(
                baseURL: URL(string: "http://localhost")!, credential: .apiKey(SandboxFixtures.jobsKeySecret),
                transport: InProcessTransport(handler: { sandbox.handle($0) }), options: options)
            let notice = config.source == nil
                ? "hubscript: no configuration found; using the built-in sandbox Hub (\(try state.sandboxFile.path)). See README, \"Profiles\"."
                : nil
            return HubConnection(profileName: profileName, client: client, sandbox: sandbox, notice: notice)
        case .hub(let profile):
            let store = FileCredentialStore(directory: try state.credentials)
            let client = try HubClient(profile: profile, credentialStore: store, transport: LiveTransport(), options: options)
            return HubConnection(profileName: profileName, client: client, sandbox: nil, notice: nil)
        }
    }

    /// The embedded sandbox Hub in the state directory (created and seeded on first use).
    /// It runs without rate limits, so examples and bulk recipes run at full speed;
    /// `hubscript sandbox serve --rate-limits standard` shows pacing.
    public static func openSandbox(state: StateDirectory, rateLimits: SandboxOptions.RateLimits = .off,
                                   faults: FaultSpec = .none) throws -> HubSandbox {
        do {
            return try HubSandbox(options: SandboxOptions(storage: .file(try state.sandboxFile), rateLimits: rateLimits,
                                                          faults: faults))
        } catch let e as HubConfigError {
            throw e
        } catch {
            throw HubConfigError("cannot open the sandbox Hub in \(state.url.path): \(error) (try hubscript sandbox reset)")
        }
    }
}

/// A sandbox Hub opened on its first request. If opening fails, every request is
/// answered `503 service_unavailable` with the reason.
public final class LazySandbox: @unchecked Sendable {
    private let lock = NSLock()
    private let open: () throws -> HubSandbox
    private var opened: Result<HubSandbox, Error>?

    public init(_ open: @escaping () throws -> HubSandbox) { self.open = open }

    public var hub: HubSandbox {
        get throws {
            try lock.withLock {
                if opened == nil { opened = Result { try open() } }
                return try opened!.get()
            }
        }
    }

    public func handle(_ request: HTTPRequestMessage) -> HTTPResponseMessage {
        do { return try hub.handle(request) } catch {
            let message = ScriptHostJSON.escape("\(error)")
            return HTTPResponseMessage(status: 503, headers: ["Content-Type": "application/json"],
                                       body: Data("{\"error\":{\"code\":\"service_unavailable\",\"message\":\(message)}}".utf8))
        }
    }
}

/// JSON string escaping for hand-built error bodies.
enum ScriptHostJSON {
    static func escape(_ s: String) -> String { (try? JSONCodec.encode(.string(s))) ?? "\"\"" }
}
