import JSONKit
import ScriptHost
import RunJournal

/// One write a binding wants to make.
public struct WriteIntent: Sendable {
    /// Upper-case HTTP method: `POST`, `PATCH`, `PUT`, `DELETE`.
    public var method: String
    /// The request path with its query, as sent (`/users/usr_ada/suspend`).
    public var path: String
    /// The JSON body and its canonical bytes, converted from the recipe's value once:
    /// the key, the digest, the size check and the request all use these bytes. nil for
    /// a write without a body.
    public var body: CanonicalJSON?
    /// A key the recipe chose (`key = evt.id`), used as is instead of a derived one.
    public var explicitKey: String?
    /// What the write does, for people: `suspend usr_ada`.
    public var summary: String
    /// The result to return in plan mode (what the Hub would probably answer).
    public var predicted: ScriptValue
    /// Set when the write creates something whose id the Hub chooses: plan mode puts a
    /// placeholder (`usr_planned_1`) into `predicted[creates.field]`, and apply binds it
    /// to the real id (see `PlanBindings`).
    public var creates: CreatedID?

    /// - Parameter body: the body; nil or a JSON null for a write without one.
    public init(method: String, path: String, body: CanonicalJSON? = nil, explicitKey: String? = nil,
                summary: String, predicted: ScriptValue = .object([:]), creates: CreatedID? = nil) {
        self.method = method
        self.path = path
        self.body = body?.value.isNull == true ? nil : body
        self.explicitKey = explicitKey
        self.summary = summary
        self.predicted = predicted
        self.creates = creates
    }

    /// A write whose body is a recipe's value, converted here (`JSONValue(_:)`, which
    /// keeps integers and floats apart); nil, `.nilValue` and `.null` mean no body.
    /// - Throws: `ScriptStructuredError` `invalid_body` for a value JSON cannot hold (a
    ///   string that is not UTF-8, NaN, a function, …); nothing was derived or journalled.
    public init(method: String, path: String, body: ScriptValue?, explicitKey: String? = nil,
                summary: String, predicted: ScriptValue = .object([:]), creates: CreatedID? = nil) throws {
        var json: CanonicalJSON?
        if let value = WriteBody.normalized(body) {
            do { json = CanonicalJSON(try JSONValue(value)) } catch {
                throw ScriptStructuredError(code: "invalid_body", message: "cannot send the body of \(method) \(path): \(error)")
            }
        }
        self.init(method: method, path: path, body: json, explicitKey: explicitKey, summary: summary,
                  predicted: predicted, creates: creates)
    }
}

/// What `WriteCoordinator.perform` returns to the binding.
public struct WriteResult: Sendable, Equatable {
    /// The response (live), the journalled response (replayed) or the prediction (planned).
    public var value: ScriptValue
    /// The Idempotency-Key the write carries.
    public var key: String
    /// The value came from the journal; nothing was sent.
    public var replayed: Bool
    /// Plan mode: nothing was sent; `value` is the prediction.
    public var planned: Bool

    public init(value: ScriptValue, key: String, replayed: Bool, planned: Bool) {
        self.value = value
        self.key = key
        self.replayed = replayed
        self.planned = planned
    }
}

/// How a run treats its writes.
public enum WriteMode: Sendable {
    /// Send every write (answering already-done keys from the journal).
    case live
    /// Send nothing; record each write as a `PlannedWrite`.
    case plan
    /// Send a write only if it is the plan's next write.
    case apply(Plan)
}

/// A server's definite refusal of a write (4xx, or a 5xx the server documents as
/// "nothing changed"). Any other error thrown by `send` means the outcome is unknown.
public protocol DefiniteWriteFailure: Error {
    var httpStatus: Int { get }
}

/// One write of a plan.
public struct PlannedWrite: Sendable, Equatable {
    /// Position in the run, from 1.
    public var sequence: Int
    public var key: String
    public var method: String
    public var path: String
    /// nil: no body.
    public var body: JSONValue?
    /// SHA-256 of the canonical JSON body; nil without a body.
    public var bodySHA256: String?
    public var summary: String
    public var predicted: ScriptValue
    /// What the write creates: the placeholder later writes of the plan use for its id.
    public var creates: PlannedCreation?

    /// - Parameter body: the body; nil or a JSON null for none.
    public init(sequence: Int, key: String, method: String, path: String, body: JSONValue?,
                summary: String, predicted: ScriptValue, creates: PlannedCreation? = nil) {
        self.sequence = sequence
        self.key = key
        self.method = method
        self.path = path
        self.body = WriteBody.normalized(body)
        self.bodySHA256 = WriteBody.digest(self.body)
        self.summary = summary
        self.predicted = predicted
        self.creates = creates
    }
}

/// Body canonicalization shared by keys, digests and plans.
enum WriteBody {
    /// `.nilValue` and `.null` mean "no body".
    static func normalized(_ body: ScriptValue?) -> ScriptValue? {
        switch body {
        case nil, .nilValue?, .null?: nil
        case let b?: b
        }
    }

    /// A JSON null means "no body".
    static func normalized(_ body: JSONValue?) -> JSONValue? {
        body?.isNull == true ? nil : body
    }

    /// Canonical JSON text; "" without a body.
    static func canonical(_ body: JSONValue?) -> String {
        guard let b = normalized(body) else { return "" }
        return String(decoding: b.canonicalBytes, as: UTF8.self)
    }

    static func digest(_ body: JSONValue?) -> String? {
        guard normalized(body) != nil else { return nil }
        return Digest.sha256Hex(canonical(body))
    }
}
