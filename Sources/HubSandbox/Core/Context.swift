import Foundation
import HTTPKit

/// Who is calling: a user through a session's access token, or an API key.
struct Caller {
    enum Kind: Equatable { case user(sessionId: String), apiKey(keyId: String) }
    let kind: Kind
    /// The user behind a user token; nil for API keys (platform keys act as themselves).
    let userId: String?
    let permissions: Set<String>

    /// Idempotency and rate-limit scope: the user, or the key.
    var principal: String {
        switch kind {
        case .user: return userId ?? "?"
        case .apiKey(let id): return id
        }
    }
    /// Rate limits apply per session or API key.
    var bucketKey: String {
        switch kind {
        case .user(let s): return s
        case .apiKey(let id): return id
        }
    }
    var actor: (type: String, id: String) {
        switch kind {
        case .user: return ("user", userId ?? "")
        case .apiKey(let id): return ("api_key", id)
        }
    }
    var sessionId: String? { if case .user(let s) = kind { return s }; return nil }

    func can(_ permission: String) -> Bool { permissions.contains(permission) }
}

/// Everything a handler needs about one request.
final class RequestContext {
    let request: HTTPRequestMessage
    let requestId: String
    /// The clock's now, in whole seconds, fixed for the request.
    let now: Int
    var caller: Caller?
    /// Path parameters in pattern order (`/users/:id/roles/:role` → [id, role]).
    var params: [String] = []
    /// A bucket the handler took for its class (token refresh): the response's
    /// `RateLimit-*` headers then describe it instead of the caller's bucket.
    var classRate: RateLimiter.Outcome?
    let query: [(name: String, value: String)]
    private var parsedBody: JSON?

    init(request: HTTPRequestMessage, requestId: String, now: Int) {
        self.request = request
        self.requestId = requestId
        self.now = now
        self.query = request.queryItems
    }

    /// The first value of query parameter `name`.
    func q(_ name: String) -> String? { query.first { $0.name == name }?.value }
    /// Every value of a repeatable query parameter.
    func qAll(_ name: String) -> [String] { query.filter { $0.name == name }.map(\.value) }

    /// The caller; handlers on authenticated routes can rely on it.
    var who: Caller {
        guard let caller else { preconditionFailure("handler on an unauthenticated route asked for a caller") }
        return caller
    }

    /// Throws `403 forbidden` unless the caller holds `permission`.
    func require(_ permission: String) throws {
        guard who.can(permission) else { throw HubErrorReply.forbidden(permission) }
    }

    /// Resolves `me` to the caller's user id (`400 user_token_required` for an API key).
    func userParam(_ raw: String) throws -> String {
        guard raw == "me" else { return raw }
        guard let u = who.userId, case .user = who.kind else { throw HubErrorReply.userTokenRequired() }
        return u
    }

    /// True when `raw` is `me` or the caller's own id (self-service reads need no permission).
    func isSelf(_ userId: String) -> Bool { who.userId == userId && who.sessionId != nil }

    /// The JSON object body; an empty body is `{}`. `400 invalid_request` otherwise.
    func body() throws -> JSON {
        if let parsedBody { return parsedBody }
        let data = request.body
        let value: JSON
        if data.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            value = .object([])
        } else {
            guard let v = try? JSONParser.parse(data) else { throw HubErrorReply.invalidRequest("The body is not valid JSON.") }
            value = v
        }
        guard case .object = value else { throw HubErrorReply.invalidRequest("The body must be a JSON object.") }
        parsedBody = value
        return value
    }

    /// ETag check for PATCH/DELETE: when `If-Match` is sent and does not match `version`
    /// (`*` matches anything), `409 version_conflict` with `details.current_etag`.
    func checkIfMatch(_ version: Int) throws {
        guard let header = request.headers["If-Match"] else { return }
        let current = "W/\"\(version)\""
        let tags = header.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        if tags.contains("*") || tags.contains(current) || tags.contains("\"\(version)\"") { return }
        throw HubErrorReply(status: 409, code: "version_conflict",
                       message: "The resource changed since you read it; refetch, then reload or re-apply.",
                       details: [("current_etag", .string(current))], headers: [("ETag", current)])
    }
}
