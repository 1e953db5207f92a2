import Foundation
import ScriptHost

/// One write a binding wants to make, before keys, journal and mode are applied.
public struct HubWrite: Sendable {
    public var method: HubMethod
    public var path: String
    public var body: HubJSON?
    /// The recipe's own idempotency key (`{ key = … }`), used as is.
    public var explicitKey: String?
    /// For people: "suspend usr_ada".
    public var summary: String
    /// What plan mode returns instead of sending.
    public var predicted: ScriptValue
    /// For PATCH: whether the change still applies to a refetched resource after a
    /// `version_conflict` (nil: give up on conflict).
    public var stillApplies: (@Sendable (HubJSON) -> Bool)?
}

/// Where every write of a run goes: keys, the journal, plan and apply, the write
/// limit. The `hub` module never sends a write any other way, so dry-run and plan
/// are enforced here and not per binding. `send(key)` performs the request.
public protocol HubWriteGateway: AnyObject, Sendable {
    func perform(_ write: HubWrite, send: (_ key: String) throws -> ScriptValue) throws -> ScriptValue
}

/// Sends every write at once with a random key: for embedding and tests only; runs use
/// the journalled coordinator.
public final class DirectWriteGateway: HubWriteGateway, @unchecked Sendable {
    public init() {}
    public func perform(_ write: HubWrite, send: (String) throws -> ScriptValue) throws -> ScriptValue {
        try send(write.explicitKey ?? "hs-direct-" + UUID().uuidString.lowercased())
    }
}
