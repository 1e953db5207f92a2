import Foundation
import HubClient
import ScriptHost

/// One write a binding wants to make: the coordinator adds the key, the journal, the
/// mode (live, plan, apply) and the write limit.
struct HubWrite {
    var method: HubMethod
    var path: String
    var body: HubJSON?
    /// The recipe's own idempotency key (`{ key = … }`), used as is.
    var explicitKey: String?
    /// For people: "suspend usr_ada".
    var summary: String
    /// What plan mode returns instead of sending.
    var predicted: ScriptValue
    /// Set for a create whose id the Hub chooses (plan mode predicts a placeholder).
    var creates: CreatedID? = nil
    /// For PATCH: whether the change still applies to a refetched resource after a
    /// `version_conflict` (nil: give up on conflict).
    var stillApplies: (@Sendable (HubJSON) -> Bool)?
}

/// A write the Hub refused (4xx): journalled as failed, so a resume sends it again.
package struct RejectedWrite: DefiniteWriteFailure, ScriptStructuredErrorConvertible {
    package let error: HubError
    package var httpStatus: Int { error.status ?? 0 }
    package var scriptError: ScriptStructuredError { error.scriptError }

    /// Whether `error` says the Hub did not make the write: a 4xx, or the write's
    /// feature is off (a `501`, or turned off earlier in the run), so nothing was done.
    static func isDefinite(_ error: HubError) -> Bool {
        (400..<500).contains(error.status ?? 0) || error.code == HubError.Code.featureDisabled
    }
}
