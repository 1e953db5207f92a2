import Foundation
import HubClient
import HubSandbox
import Synchronization

/// Webhook deliveries from the built-in (embedded) sandbox Hub, so `hubscript listen`
/// receives the changes a recipe makes without `sandbox serve` (docs/webhooks.md).
///
/// Contracts:
/// - A process opens each state folder's sandbox once (every connection shares it); if it
///   has webhooks, it posts their deliveries from a background thread while the process
///   lives (a long `listen` or `jobs serve`).
/// - Before the process exits (`finish`, called once by `main`), the background thread's
///   attempt in flight is let finish and then the deliveries due are sent, one attempt
///   each, for at most `finishBound` seconds in all — each receiver gets only the time
///   left — so a receiver that never answers (a recipe may register any loopback port)
///   cannot hold the exit up. What is left stays in
///   the sandbox's outbox and goes out with the next process on that state folder
///   (another run, or `sandbox serve`); a note on stderr says so.
/// - Each attempt is claimed in the store first, so this process and a `sandbox serve`
///   on the same folder never send one attempt twice.
final class EmbeddedWebhooks: Sendable {
    static let shared = EmbeddedWebhooks()
    /// The most `finish` spends delivering before the process exits.
    static let finishBound = 3.0

    /// The sandbox of each state folder this process opened, by its file's path: one per
    /// folder, shared by every connection (a `jobs serve` or `listen` opens one per fire or
    /// event; they share its store and its one delivery thread).
    private let sandboxes = Mutex<[String: HubSandbox]>([:])

    /// The embedded sandbox of `state`, opened by `open` the first time; its delivery
    /// thread started then if it has webhooks.
    func sandbox(state: StateDirectory, open: () throws -> HubSandbox) throws -> HubSandbox {
        let path = try state.sandboxFile.path
        return try sandboxes.withLock { sandboxes in
            if let known = sandboxes[path] { return known }
            let sandbox = try open()
            sandboxes[path] = sandbox
            if sandbox.hasWebhooks { sandbox.startWebhookDelivery() }
            return sandbox
        }
    }

    /// Stops the delivery threads and sends what is due (see the type's contract).
    func finish() {
        let opened = sandboxes.withLock { sandboxes -> [HubSandbox] in
            defer { sandboxes = [:] }
            return Array(sandboxes.values)
        }
        for sandbox in opened where sandbox.hasWebhooks {
            // Not waiting for the thread left its attempt in flight counted as pending
            // (and cut short by the exit) when a run ended while it was sending.
            let deadline = Date().addingTimeInterval(Self.finishBound)
            sandbox.stopWebhookDelivery(waitingAtMost: Self.finishBound)
            let left = sandbox.deliverDueWebhooks(within: max(0, deadline.timeIntervalSinceNow))
            if left > 0 {
                let what = left == 1 ? "1 webhook delivery is" : "\(left) webhook deliveries are"
                Console.err("note: \(what) still pending in the built-in sandbox (its receiver did not answer yet); "
                            + "the next run on this state folder, or hubscript sandbox serve, retries them\n")
            }
        }
    }
}
