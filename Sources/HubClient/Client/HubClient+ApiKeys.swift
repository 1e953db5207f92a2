import Foundation

/// A secret the Hub hands out once (a new or rotated API key's `secret`). It has no
/// text form: `description`, string interpolation and `dump` show
/// `<secret withheld>`, so it cannot reach a log or an error by accident. The one way
/// to read it is `withValue`, for the code that stores it (the vault).
public struct HubOnceSecret: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    private let value: String

    init(_ value: String) { self.value = value }

    public var description: String { "<secret withheld>" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: []) }

    /// Calls `body` with the secret's text.
    public func withValue<T>(_ body: (String) throws -> T) rethrows -> T { try body(value) }
}

/// The answer of `POST /api-keys` or `POST /api-keys/{id}/rotate`, split: the key's
/// record without its secret, and the secret.
public struct HubIssuedKey: Sendable {
    /// The key's record as the Hub returned it, with `secret` taken out.
    public let record: HubJSON
    public let secret: HubOnceSecret
    /// `Idempotent-Replayed: true`: the Hub answered a retry from its idempotency store.
    public let replayed: Bool
}

/// API key management (docs/hub-api.md, "The rest of the admin API"). A key's secret comes
/// back once; these calls take it out of the record at once so nothing downstream (journal,
/// plan, output) gets it with the record. Errors are the Hub's (`400 user_token_required`
/// for an API-key caller, `403 role_escalation_forbidden`, `422 unknown_permission` …), and
/// `502 secret_missing` when a 2xx answer has no secret.
extension HubClient {
    /// `POST /api-keys` with `body` (`{name, scope, permissions, mode, …}`).
    public func createAPIKey(_ body: HubJSON, idempotencyKey: String? = nil) throws -> HubIssuedKey {
        try Self.issuedKey(try send(HubRequest(.post, "/api-keys", body: body, idempotencyKey: idempotencyKey)))
    }

    /// `POST /api-keys/{id}/rotate`: the old secret stops working at once.
    public func rotateAPIKey(id: String, idempotencyKey: String? = nil) throws -> HubIssuedKey {
        try Self.issuedKey(try send(HubRequest(.post, "/api-keys/\(Self.pathSegment(id))/rotate", body: [:],
                                               idempotencyKey: idempotencyKey)))
    }

    /// Splits a 2xx answer into the record and the secret.
    static func issuedKey(_ response: HubResponse) throws -> HubIssuedKey {
        guard case .object(var members) = response.json, let secret = members.removeValue(forKey: "secret")?.stringValue,
              !secret.isEmpty else {
            throw HubError(code: "secret_missing", message: "the Hub answered without the key's secret, which it shows only once",
                           status: 502, requestID: response.requestID,
                           hint: "The key may exist without a stored secret: list the keys, revoke it, and create another.")
        }
        return HubIssuedKey(record: .object(members), secret: HubOnceSecret(secret), replayed: response.replayed)
    }

    /// `id` percent-encoded for one path segment (letters, digits and `-._~` kept).
    static func pathSegment(_ id: String) -> String {
        id.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn:
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")) ?? id
    }
}
