import Foundation
import HTTPKit

/// The sandbox Hub: an in-process emulation of the Hub API of `docs/hub-api.md`, backed by
/// SQLite and seeded with deterministic demo data (fixed accounts in `SandboxFixtures`).
///
/// Thread-safe: `handle` may be called concurrently (an HTTP server does); requests are
/// serialized by one lock, except injected latency, which runs outside it.
public final class HubSandbox: @unchecked Sendable {
    let engine: HubEngine
    let deliverer: WebhookDeliverer
    public let options: SandboxOptions

    /// Opens (and for a file, creates) the store; seeds it when it holds no users.
    public init(options: SandboxOptions = SandboxOptions()) throws {
        self.options = options
        engine = try HubEngine(options: options)
        deliverer = WebhookDeliverer(engine: engine)
    }

    /// Answers one Hub API request. Never throws: failures are API errors
    /// (`{"error":{…}}`), and a lost-response fault sets `dropped`.
    public func handle(_ request: HTTPRequestMessage) -> HTTPResponseMessage {
        engine.handle(request)
    }

    /// Wipes every record (and rate-limit state) and seeds again with `seed`.
    public func reset(seed: Int) throws {
        engine.lock.lock()
        defer { engine.lock.unlock() }
        try engine.reset(seed: seed)
    }

    /// Test hook: called with the Idempotency-Key after it was reserved and before the
    /// request runs, outside the lock; blocking in it keeps the request "in flight".
    var afterReservation: (@Sendable (String) -> Void)? {
        get { engine.afterReservation }
        set { engine.afterReservation = newValue }
    }
}
