/// An API error the emulated Hub answers with: its HTTP status, its `code` (an open set,
/// docs/hub-api.md "Conventions", errors), a message that says what to do, and `details`. Rendered as
/// `{"error":{"code","message","details"}}`. (The client's view of such an answer is
/// `HubClient.HubError`; the sandbox depends on neither side's type.)
struct HubErrorReply: Error {
    var status: Int
    var code: String
    var message: String
    var details: [(String, JSON)] = []
    var headers: [(String, String)] = []

    var reply: Reply {
        let body: JSON = .object([("error", .object([
            ("code", .string(code)), ("message", .string(message)), ("details", .object(details)),
        ]))])
        return Reply(status: status, body: body, headers: headers)
    }

    static func invalidRequest(_ message: String) -> HubErrorReply {
        HubErrorReply(status: 400, code: "invalid_request", message: message)
    }
    static func notFound(_ what: String) -> HubErrorReply {
        HubErrorReply(status: 404, code: "not_found", message: "\(what) does not exist or is not visible to the caller.")
    }
    static func forbidden(_ permission: String) -> HubErrorReply {
        HubErrorReply(status: 403, code: "forbidden", message: "This action requires the permission \(permission).",
                 details: [("required_permission", .string(permission))])
    }
    static func unauthenticated(_ message: String) -> HubErrorReply {
        HubErrorReply(status: 401, code: "unauthenticated", message: message)
    }
    /// `422 validation_failed` with `details.fields = [{field, code}]`.
    static func validation(_ fields: [(String, String)]) -> HubErrorReply {
        let list = fields.map { JSON.object([("field", .string($0.0)), ("code", .string($0.1))]) }
        let names = fields.map(\.0).joined(separator: ", ")
        return HubErrorReply(status: 422, code: "validation_failed", message: "Invalid fields: \(names).",
                        details: [("fields", .array(list))])
    }
    static func readOnly(_ fields: [String]) -> HubErrorReply {
        HubErrorReply(status: 422, code: "read_only_field",
                 message: "Read-only fields cannot be changed: \(fields.joined(separator: ", ")).",
                 details: [("fields", .array(fields.map { .object([("field", .string($0)), ("code", .string("read_only"))]) }))])
    }
    static func userTokenRequired() -> HubErrorReply {
        HubErrorReply(status: 400, code: "user_token_required",
                 message: "'me' needs a user access token; an API key has no user. Use an explicit usr_ id.")
    }
    static func invalidTransition(from: String, to: String) -> HubErrorReply {
        HubErrorReply(status: 422, code: "invalid_status_transition", message: "Cannot change status from \(from) to \(to).",
                 details: [("from", .string(from)), ("to", .string(to))])
    }
    static func rateLimited(retryAfter: Int) -> HubErrorReply {
        HubErrorReply(status: 429, code: "rate_limited", message: "Too many requests; retry after \(retryAfter) s.",
                 details: [("retry_after", .int(retryAfter))], headers: [("Retry-After", String(retryAfter))])
    }
    static func internalError(_ message: String = "The sandbox failed unexpectedly.") -> HubErrorReply {
        HubErrorReply(status: 500, code: "internal_error", message: message)
    }
}

/// What a handler returns: status, optional JSON body, extra headers (ETag, Location…).
struct Reply {
    var status: Int
    var body: JSON?
    var headers: [(String, String)] = []

    static func json(_ status: Int, _ body: JSON, etag: Int? = nil) -> Reply {
        Reply(status: status, body: body, headers: etag.map { [("ETag", "W/\"\($0)\"")] } ?? [])
    }
    static let noContent = Reply(status: 204, body: nil)
}
