import Foundation
import HTTPKit
import Testing
@testable import HubClient

@Suite("Error decoding")
struct ErrorMappingTests {
    /// Every code of docs/hub-api.md with its status. Codes the pipeline treats specially
    /// (401 refresh, 409 reapply, 429/5xx retries) are sent where those rules don't apply:
    /// API-key auth, a write without key, no reapply closure, one attempt.
    static let hubCodes: [(status: Int, code: String)] = [
        (400, "invalid_request"), (400, "invalid_cursor"), (400, "user_token_required"),
        (400, "idempotency_key_required"), (401, "unauthenticated"), (401, "session_revoked"),
        (401, "refresh_token_reused"), (403, "forbidden"), (403, "entitlement_required"),
        (403, "role_escalation_forbidden"), (404, "not_found"), (409, "version_conflict"),
        (409, "idempotency_key_reused"), (409, "idempotency_key_in_flight"), (409, "entitlement_already_exists"),
        (409, "member_role_required"), (413, "payload_too_large"), (422, "validation_failed"),
        (422, "read_only_field"), (422, "invalid_status_transition"), (429, "rate_limited"),
        (500, "internal_error"), (501, "not_implemented"), (503, "service_unavailable"),
        (400, "unsupported_api_version"),
    ]

    @Test("each Hub error code decodes with status, details, request id and a specific hint", arguments: TransportKind.allCases)
    func everyCode(kind: TransportKind) throws {
        let table = Self.hubCodes
        let h = try Harness(kind, configure: { $0.retry = RetryPolicy(maxAttempts: 1) }) { request, _ in
            let index = Int(request.path.split(separator: "/").last!)!
            let (status, code) = table[index]
            return errorResponse(status, code, details: ["index": .number(Double(index))], headers: [("X-Request-Id", "req_\(index)")])
        }
        var hints = Set<String>()
        for (index, entry) in table.enumerated() {
            let err = hubError { try h.client.post("/probe/\(index)", body: ["a": 1]) }
            #expect(err?.code == entry.code)
            #expect(err?.status == entry.status)
            #expect(err?.message == "scripted \(entry.code)")
            #expect(err?.details?["index"]?.intValue == index)
            #expect(err?.requestID == "req_\(index)")
            if let hint = err?.hint {
                #expect(!hint.contains("The Hub refused the request with"), "generic hint for \(entry.code)")
                hints.insert(hint)
            }
        }
        #expect(hints.count == table.count)
    }

    @Test("forbidden names the permission and the seed roles that grant it")
    func forbiddenHint() throws {
        let h = try Harness(.inProcess) { _, _ in errorResponse(403, "forbidden", details: ["required_permission": "audit.view"]) }
        let err = hubError { try h.client.get("/audit-events") }
        #expect(err?.hint == "Your credential lacks the permission audit.view; ask an administrator for a role that grants it (held by role_superadmin, role_support).")
        #expect(Capabilities.seedRoles(granting: "users.list") == ["role_billing_admin", "role_superadmin", "role_support"])
        #expect(Capabilities.seedRoles(granting: "billing.manage") == ["role_billing_admin", "role_superadmin"])
    }

    @Test("an unknown code keeps its name and gets a generic hint")
    func unknownCode() throws {
        let h = try Harness(.inProcess) { _, _ in errorResponse(422, "brand_new_code") }
        let err = hubError { try h.client.get("/x") }
        #expect(err?.code == "brand_new_code")
        #expect(err?.hint.contains("brand_new_code") == true)
    }

    @Test("a body that is not a Hub error is invalid_response", arguments: TransportKind.allCases)
    func nonJSON(kind: TransportKind) throws {
        let h = try Harness(kind) { request, _ in
            if request.path == "/ok-html" {
                return HTTPResponseMessage(status: 200, headers: ["Content-Type": "text/html"], body: Data("<html>proxy</html>".utf8))
            }
            return HTTPResponseMessage(status: 502, headers: ["Content-Type": "text/html"], body: Data("<html>bad gateway</html>".utf8))
        }
        let ok = hubError { try h.client.get("/ok-html") }
        #expect(ok?.code == HubError.Code.invalidResponse)
        #expect(ok?.status == 200)
        let bad = hubError { try h.client.post("/bad", body: [:]) }
        #expect(bad?.code == HubError.Code.invalidResponse)
        #expect(bad?.status == 502)
        #expect(bad?.message.contains("bad gateway") == true)
    }

    @Test("a redirect is never followed", arguments: TransportKind.allCases)
    func redirect(kind: TransportKind) throws {
        let h = try Harness(kind) { request, _ in
            if request.path == "/users/me" {
                return HTTPResponseMessage(status: 302, headers: ["Location": "http://127.0.0.1:1/elsewhere", "Content-Length": "0"])
            }
            return jsonResponse(["followed": true])
        }
        let err = hubError { try h.client.get("/users/me") }
        #expect(err?.code == HubError.Code.redirectRefused)
        #expect(err?.status == 302)
        #expect(h.requests.map(\.path) == ["/users/me"])
    }

    @Test("a lost response is transport_error", arguments: TransportKind.allCases)
    func dropped(kind: TransportKind) throws {
        let h = try Harness(kind) { _, _ in HTTPResponseMessage(status: 201, dropped: true) }
        let err = hubError { try h.client.post("/users/usr_1/suspend", body: ["reason": "x"]) }
        #expect(err?.code == HubError.Code.transportError)
        #expect(err?.status == nil)
        #expect(err?.details?["reason"] == "connection_lost")
        #expect(err?.requestID != nil)
    }

    @Test("a body over 16 MiB is response_too_large", arguments: TransportKind.allCases)
    func tooLarge(kind: TransportKind) throws {
        let big = Data(repeating: UInt8(ascii: "a"), count: HubTransportPolicy.maxResponseBytes + 10)
        let h = try Harness(kind) { _, _ in HTTPResponseMessage(status: 200, headers: ["Content-Type": "application/json"], body: big) }
        let err = hubError { try h.client.post("/big", body: [:]) }
        #expect(err?.code == HubError.Code.responseTooLarge)
    }

    @Test("connection refused is transport_error")
    func refused() throws {
        let client = try HubClient(baseURL: URL(string: "http://127.0.0.1:1")!, credential: .none, transport: LiveTransport(),
                                   options: HubClientOptions(rateLimitPerMinute: 0, retry: RetryPolicy(maxAttempts: 1)))
        let err = hubError { try client.get("/health") }
        #expect(err?.code == HubError.Code.transportError)
        #expect(err?.description.contains("transport_error") == true)
    }

    @Test("validation errors read as details.fields in either shape, and idempotency_key_reused by its code as 409 or 422")
    func contractShapes() throws {
        let reference: HubJSON = ["fields": [["field": "email", "code": "invalid", "message": "not an email"]]]
        let seed: HubJSON = [["field": "email", "code": "invalid", "message": "not an email"]]
        for details in [reference, seed] {
            let h = try Harness(.inProcess, configure: { $0.retry = RetryPolicy(maxAttempts: 1) }) { _, _ in
                errorResponse(422, "validation_failed", details: details)
            }
            let err = hubError { try h.client.post("/users", body: ["email": "x"]) }
            #expect(err?.details == reference)
            #expect(err?.hint == "Fix the fields listed in details.fields.")
        }
        for status in [409, 422] {
            let h = try Harness(.inProcess, configure: { $0.retry = RetryPolicy(maxAttempts: 3) }) { _, _ in
                errorResponse(status, "idempotency_key_reused")
            }
            let err = hubError { try h.client.post("/users/usr_1/entitlements", body: [:], idempotencyKey: "k") }
            #expect(err?.code == "idempotency_key_reused")
            #expect(err?.status == status)
            #expect(h.requests.count == 1, "never retried")
        }
    }

    @Test("every request says which language its messages should be in")
    func acceptLanguage() throws {
        let h = try Harness(.inProcess) { _, _ in jsonResponse(["ok": true]) }
        _ = try h.client.get("/users/usr_1")
        #expect(h.requests.first?.headers["Accept-Language"] == "en")
    }
}
