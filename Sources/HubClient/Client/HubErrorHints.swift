import Foundation

extension HubError {
    /// The hint for `code`: what a person running hubscript should do next. Unknown
    /// codes get a generic hint keyed on nothing but the code.
    static func hint(for code: String, details: HubJSON?) -> String {
        if code == Code.forbidden, let permission = details?["required_permission"]?.stringValue {
            let roles = Capabilities.seedRoles(granting: permission)
            let via = roles.isEmpty ? "" : " (held by \(roles.joined(separator: ", ")))"
            return "Your credential lacks the permission \(permission); ask an administrator for a role that grants it\(via)."
        }
        if code == Code.versionConflict {
            return "Someone changed the resource since you read it; read it again and reapply your change."
        }
        return hints[code] ?? "The Hub refused the request with \(code); see the message and request id for details."
    }

    private static let hints: [String: String] = [
        Code.invalidRequest: "Check the request's parameters against docs/hub-api.md.",
        Code.invalidCursor: "Restart the listing: cursors expire after 24 h and only work with the filters they came from.",
        Code.userTokenRequired: "This call needs a user session; run `hubscript login` instead of using an API key.",
        Code.idempotencyKeyRequired: "Send an Idempotency-Key with this write (recipes do this automatically).",
        Code.unsupportedAPIVersion: "This Hub does not speak Substratal-Version 1; upgrade hubscript or check the profile's hub_url and api_prefix.",
        Code.unauthenticated: "Log in again with `hubscript login`, or check the profile's API key.",
        Code.sessionRevoked: "The session was revoked; run `hubscript login` to start a new one.",
        Code.refreshTokenReused: "The refresh token was used twice, so the Hub ended the session; run `hubscript login`.",
        Code.forbidden: "Your credential lacks a permission this call needs; ask an administrator for a role that grants it.",
        Code.entitlementRequired: "The user has no active entitlement for that application; grant one first.",
        Code.roleEscalationForbidden: "You cannot assign a role holding permissions you lack; ask a superadmin.",
        Code.notFound: "Check the id or path; the resource does not exist or is not visible to you.",
        Code.idempotencyKeyReused: "The Idempotency-Key was already used with a different body; use a new key for a different change.",
        Code.idempotencyKeyInFlight: "The same write is still running on the Hub; wait a second and retry with the same key.",
        Code.entitlementAlreadyExists: "The user already holds that entitlement; see details.existing_entitlement_id.",
        Code.memberRoleRequired: "role_member is implicit and cannot be removed.",
        Code.payloadTooLarge: "Send a smaller body.",
        Code.validationFailed: "Fix the fields listed in details.fields.",
        Code.readOnlyField: "Remove read-only fields from the PATCH body.",
        Code.invalidStatusTransition: "That status change is not allowed (revoked is terminal; disabling needs a reason).",
        Code.rateLimited: "The Hub's rate limit was hit; wait for Retry-After or lower rate_limit_per_minute in the profile.",
        Code.internalError: "The Hub failed; retry later and report the request id if it persists.",
        Code.notImplemented: "This Hub does not offer that feature.",
        Code.serviceUnavailable: "The Hub is temporarily unavailable; retry after the Retry-After delay.",
        Code.mfaRequired: "This account uses MFA; pass the code with --mfa-code.",
        Code.transportError: "Check the network and the profile's hub_url; the request may or may not have reached the Hub.",
        Code.invalidResponse: "The server did not answer like a Substratal Hub; check the profile's hub_url and api_prefix.",
        Code.responseTooLarge: "The response exceeded 16 MiB; narrow the request with filters or a smaller limit.",
        Code.redirectRefused: "The server redirected; set hub_url to the final address (redirects are never followed).",
        Code.insecureTransport: "Use an https:// hub_url (plain http is allowed only for 127.0.0.1, ::1 and localhost).",
        Code.sessionEnded: "Run `hubscript login` to sign in again.",
        Code.featureDisabled: "This Hub does not offer the feature; the client stopped calling it for this run.",
        Code.clientHalted: "An earlier unsupported_api_version stopped all calls; fix the profile and run again.",
        Code.configuration: "Fix the profile in the configuration file.",
    ]
}
