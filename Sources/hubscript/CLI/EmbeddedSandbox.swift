import Foundation
import HTTPKit
import HubClient
import HubSandbox
import ScriptHost
import Synchronization

/// The built-in sandbox Hub composed with the client: the only place (with `sandbox
/// serve`) where the CLI hands the embedded `HubSandbox` to anything. The client sees
/// an in-process transport and the sandbox's jobs key.
struct EmbeddedSandbox: EmbeddedHubOpener {
    var apiKeyID: String { SandboxFixtures.jobsKeyId }
    var apiKeySecret: String { SandboxFixtures.jobsKeySecret }

    func transport(state: StateDirectory) -> any HubTransport {
        // Opened on the first request, so a recipe that never calls the Hub does not
        // pay for opening (or seeding) the sandbox.
        let sandbox = LazySandbox { try EmbeddedWebhooks.shared.sandbox(state: state) { try Self.open(state: state) } }
        return InProcessTransport(handler: { sandbox.handle($0) })
    }

    /// The embedded sandbox Hub in the state directory (created and seeded on first use).
    /// It runs without rate limits, so examples and bulk recipes run at full speed;
    /// `hubscript sandbox serve --rate-limits standard` shows pacing.
    static func open(state: StateDirectory, rateLimits: SandboxOptions.RateLimits = .off,
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
final class LazySandbox: @unchecked Sendable {
    private let open: () throws -> HubSandbox
    private let opened = Mutex<Result<HubSandbox, Error>?>(nil)

    init(_ open: @escaping () throws -> HubSandbox) { self.open = open }

    var hub: HubSandbox {
        get throws {
            try opened.withLock { opened in
                if opened == nil { opened = Result { try open() } }
                return try opened!.get()
            }
        }
    }

    func handle(_ request: HTTPRequestMessage) -> HTTPResponseMessage {
        do { return try hub.handle(request) } catch {
            let message = (try? JSONCodec.encode(.string("\(error)"))) ?? "\"\""
            return HTTPResponseMessage(status: 503, headers: ["Content-Type": "application/json"],
                                       body: Data("{\"error\":{\"code\":\"service_unavailable\",\"message\":\(message)}}".utf8))
        }
    }
}
