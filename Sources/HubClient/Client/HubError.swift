import Foundation

/// An error from the Hub or from the way to it.
///
/// `code` is the Hub's error code (`forbidden`, `version_conflict`, …) or one of the
/// client's own (`transport_error`, `invalid_response`, `session_ended`, …; see
/// `HubError.Code`). Codes are an open set: compare with the constants, never switch
/// exhaustively. `hint` always says what to do next.
public struct HubError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: String
    public var message: String
    /// The HTTP status, or nil when no response arrived.
    public var status: Int?
    /// The error's `details` object as the Hub sent it (or the client's own details).
    public var details: HubJSON?
    /// The request id (`X-Request-Id`) of the request that failed.
    public var requestID: String?
    /// What to do about it, in one sentence.
    public var hint: String

    public init(code: String, message: String, status: Int? = nil, details: HubJSON? = nil,
                requestID: String? = nil, hint: String? = nil) {
        self.code = code
        self.message = message
        self.status = status
        self.details = details
        self.requestID = requestID
        self.hint = hint ?? HubError.hint(for: code, details: details)
    }

    /// One line: the Hub's code and message come from the server, and a line break in
    /// them would let it start lines of its own in a report (a forged `done:`), so line
    /// breaks show as `\n` and `\r`. `message` itself stays as the Hub sent it.
    public var description: String {
        func oneLine(_ s: String) -> String {
            guard s.contains(where: { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) else { return s }
            var out = ""
            for scalar in s.unicodeScalars {
                switch scalar {
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out
        }
        var text = "\(oneLine(code)): \(oneLine(message))"
        if let status { text += " (HTTP \(status))" }
        if let requestID { text += " [request \(requestID)]" }
        return text + ". " + hint
    }
}

extension HubError {
    /// Codes the client knows. Hub codes first, then the client's own.
    public enum Code {
        public static let invalidRequest = "invalid_request"
        public static let invalidCursor = "invalid_cursor"
        public static let userTokenRequired = "user_token_required"
        public static let idempotencyKeyRequired = "idempotency_key_required"
        public static let unsupportedAPIVersion = "unsupported_api_version"
        public static let unauthenticated = "unauthenticated"
        public static let sessionRevoked = "session_revoked"
        public static let refreshTokenReused = "refresh_token_reused"
        public static let forbidden = "forbidden"
        public static let entitlementRequired = "entitlement_required"
        public static let roleEscalationForbidden = "role_escalation_forbidden"
        public static let notFound = "not_found"
        public static let versionConflict = "version_conflict"
        public static let idempotencyKeyReused = "idempotency_key_reused"
        public static let idempotencyKeyInFlight = "idempotency_key_in_flight"
        public static let entitlementAlreadyExists = "entitlement_already_exists"
        public static let memberRoleRequired = "member_role_required"
        public static let payloadTooLarge = "payload_too_large"
        public static let validationFailed = "validation_failed"
        public static let readOnlyField = "read_only_field"
        public static let invalidStatusTransition = "invalid_status_transition"
        public static let rateLimited = "rate_limited"
        public static let internalError = "internal_error"
        public static let notImplemented = "not_implemented"
        public static let serviceUnavailable = "service_unavailable"
        public static let mfaRequired = "mfa_required"

        /// No response arrived: connection refused, lost, or timed out.
        public static let transportError = "transport_error"
        /// A response arrived but is not what the Hub sends (not JSON, wrong shape).
        public static let invalidResponse = "invalid_response"
        /// The response body exceeded the client's byte limit.
        public static let responseTooLarge = "response_too_large"
        /// The server answered with a redirect; the client never follows them.
        public static let redirectRefused = "redirect_refused"
        /// The Hub URL is not HTTPS and not a loopback host.
        public static let insecureTransport = "insecure_transport"
        /// The user session ended (refresh failed, reused or revoked); log in again.
        public static let sessionEnded = "session_ended"
        /// A gated feature is off for this client (it answered 404/501 before).
        public static let featureDisabled = "feature_disabled"
        /// An earlier `unsupported_api_version` stopped all traffic of this client.
        public static let clientHalted = "client_halted"
        /// The client is misconfigured (missing API key, bad profile).
        public static let configuration = "configuration_error"
    }
}
