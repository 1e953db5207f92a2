import Foundation
import HTTPKit
import HubSandbox
import Testing
@testable import HubClient

/// A `HubSandbox` reached over one transport, counting what crossed the wire.
final class SandboxHarness: @unchecked Sendable {
    let sandbox: HubSandbox
    let kind: TransportKind
    let baseURL: URL
    let transport: any HubTransport
    private let server: HTTPServer?
    private let counts = ClientLock([String: Int]())

    init(_ kind: TransportKind, options: SandboxOptions = SandboxOptions(rateLimits: .off)) throws {
        let sandbox = try HubSandbox(options: options)
        self.sandbox = sandbox
        self.kind = kind
        let counts = self.counts
        let handler: @Sendable (HTTPRequestMessage) -> HTTPResponseMessage = { request in
            let response = sandbox.handle(request)
            counts.withLock { c in
                c["\(request.method) \(request.path)", default: 0] += 1
                c["requests", default: 0] += 1
                if response.dropped { c["dropped", default: 0] += 1 }
                if response.status >= 500 { c["5xx", default: 0] += 1 }
                if response.status == 429 { c["429", default: 0] += 1 }
            }
            return response
        }
        switch kind {
        case .inProcess:
            server = nil
            transport = InProcessTransport(handler: handler)
            baseURL = URL(string: "https://sandbox.hub.test")!
        case .live:
            let server = try HTTPServer(host: "127.0.0.1", port: 0, handler: handler)
            server.start()
            self.server = server
            transport = LiveTransport()
            baseURL = URL(string: "http://127.0.0.1:\(server.port)")!
        }
    }

    deinit { server?.stop() }

    /// How many requests matched `key` (`"METHOD /path"`, `requests`, `dropped`, `5xx`, `429`).
    func count(_ key: String) -> Int { counts.withLock { $0[key] ?? 0 } }

    /// A client on this sandbox with a fake clock, pacing off, warnings collected.
    func client(_ credential: HubCredential, clock: FakeClock = FakeClock(), warnings: WarningSink = WarningSink(),
                configure: (inout HubClientOptions) -> Void = { _ in }) throws -> HubClient {
        var options = HubClientOptions(rateLimitPerMinute: 0, clock: clock, random: FixedRandom(), warn: warnings.sink,
                                       profileName: "sandbox")
        configure(&options)
        return try HubClient(baseURL: baseURL, credential: credential, transport: transport, options: options)
    }

    func jobsClient(configure: (inout HubClientOptions) -> Void = { _ in }) throws -> HubClient {
        try client(.apiKey(SandboxFixtures.jobsKeySecret), configure: configure)
    }

    /// Personal live (active/disabled) entitlements to `app`, by user: a grant to a user
    /// listed here would be `entitlement_already_exists`.
    func livePersonal(_ client: HubClient, app: String) throws -> [String: Int] {
        var byUser: [String: Int] = [:]
        for e in try client.paginate(path: "/entitlements", query: [("application_id", app)]).allItems()
        where e["organization_id"]?.isNull != false && ["active", "disabled"].contains(e["status"]?.stringValue ?? "") {
            byUser[e["user_id"]?.stringValue ?? "", default: 0] += 1
        }
        return byUser
    }

    /// A session client logged in as `email` (MFA code given when asked).
    func sessionClient(_ email: String, store: any CredentialStore = InMemoryCredentialStore(),
                       clock: FakeClock = FakeClock()) throws -> HubClient {
        let client = try client(.session(profile: "sandbox", store: store), clock: clock)
        try HubAuth(client: client).login(email: email, password: "pw", mfaCode: SandboxFixtures.mfaCode)
        return client
    }
}

/// The client's clock driving the sandbox's: sleeping advances the sandbox's time, so
/// pacing and the sandbox's token buckets run on one virtual timeline.
struct LinkedClock: HubClock {
    let sandboxClock: ManualClock
    func now() -> TimeInterval { sandboxClock.now().timeIntervalSince1970 }
    func sleep(_ seconds: TimeInterval) { if seconds > 0 { sandboxClock.advance(by: seconds) } }
}
