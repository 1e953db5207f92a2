import Foundation
import DispatchClient
import HubClient
import Automation
import SystemText

/// `on_failure = { dispatch = "PROFILE" }`: a failed fire is sent as one notification
/// through that profile's Dispatch (its `dispatch_url` and the vault entry named by
/// `dispatch_token_ref`; the built-in sandbox's Dispatch for `sandbox`). The key is
/// derived from the fire's run id, so a fire reported twice (a retry, two schedulers)
/// notifies once.
struct DispatchFailureNotifier: JobFailureNotifier {
    let common: CommonOptions.Values

    func notify(_ failure: JobFailure) throws -> String {
        let target = try common.dispatchTarget(common.hub, profile: failure.dispatch)
        let client = try target.client(secrets: VaultAccess.resolver(state: common.state), masking: .shared)
        let notification = try DispatchNotification(
            title: String("hubscript: job \(failure.job) failed".prefix(100)),
            body: String("\(failure.runID) exited \(failure.exitCode): \(failure.message)".prefix(1000)))
        let receipt = try client.send(notification, idempotencyKey: "job-failure-" + failure.runID)
        return "dispatch \"\(failure.dispatch)\" notified (\(receipt.id)\(receipt.replayed ? ", already sent" : ""))"
    }
}
