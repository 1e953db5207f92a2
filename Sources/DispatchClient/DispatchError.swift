import Foundation

/// A failed Dispatch call. `code` is the server's error code (`unauthorized`,
/// `invalid_title`, `invalid_body`, `invalid_json`, `idempotency_key_reused`, …) or one of
/// the client's own (`transport_error`, `server_error`, `invalid_response`,
/// `insecure_transport`, `redirect_refused`, `configuration_error`). Codes are an open
/// set. Messages never hold the token.
public struct DispatchError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: String
    public var message: String
    /// The HTTP status, or nil when no response arrived (or the client refused first).
    public var status: Int?
    /// The request field a validation error is about (`title`, `body`).
    public var field: String?
    /// What to do about it, in one sentence.
    public var hint: String

    public init(code: String, message: String, status: Int? = nil, field: String? = nil, hint: String = "") {
        self.code = code
        self.message = message
        self.status = status
        self.field = field
        self.hint = hint
    }

    /// The server refused the request (4xx): nothing was accepted, and sending the same
    /// request again would be refused again.
    public var isDefinite: Bool { status.map { (400..<500).contains($0) } ?? false }

    public var description: String {
        var text = "\(code): \(message)"
        if let status { text += " (HTTP \(status))" }
        return hint.isEmpty ? text : text + ". " + hint
    }
}

extension DispatchError {
    /// Codes the client knows; the server may send others.
    public enum Code {
        public static let unauthorized = "unauthorized"
        public static let invalidTitle = "invalid_title"
        public static let invalidBody = "invalid_body"
        public static let invalidJSON = "invalid_json"
        public static let idempotencyKeyReused = "idempotency_key_reused"
        public static let notFound = "not_found"
        /// No response arrived, after every attempt.
        public static let transportError = "transport_error"
        /// The server failed (5xx) on every attempt, or rate-limited past the attempts.
        public static let serverError = "server_error"
        /// A response arrived that is not what Dispatch sends.
        public static let invalidResponse = "invalid_response"
        /// The URL is plain `http://` to a host that is not loopback.
        public static let insecureTransport = "insecure_transport"
        /// The server redirected; the client never follows redirects.
        public static let redirectRefused = "redirect_refused"
        /// The client cannot be used as configured (an empty token, a bad key).
        public static let configuration = "configuration_error"
    }
}
