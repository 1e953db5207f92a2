import Foundation
import HTTPKit
import Testing
@testable import HubClient

@Suite("Feature gates, deprecation, unsupported version")
struct FeatureAndVersionTests {
    @Test("501 on a gated endpoint turns the feature off with one warning", arguments: TransportKind.allCases)
    func notImplemented(kind: TransportKind) throws {
        let h = try Harness(kind) { request, _ in
            request.path.hasPrefix("/users/me/notifications") ? errorResponse(501, "not_implemented") : jsonResponse(["ok": true])
        }
        #expect(h.client.isFeatureEnabled("notifications"))
        let first = hubError { try h.client.get("/users/me/notifications", feature: "notifications") }
        #expect(first?.code == HubError.Code.featureDisabled)
        #expect(first?.status == 501)
        #expect(first?.details?["feature"] == "notifications")
        #expect(!h.client.isFeatureEnabled("notifications"))
        let second = hubError { try h.client.get("/users/me/notifications", feature: "notifications") }
        #expect(second?.code == HubError.Code.featureDisabled)
        #expect(h.requests.count == 1)
        #expect(h.warnings.warnings.count == 1)
        #expect(h.warnings.warnings.first?.contains("'notifications'") == true)
        // Other features and ungated calls are untouched.
        _ = try h.client.get("/users/me")
        #expect(h.client.isFeatureEnabled("webhooks"))
    }

    @Test("404 on a gated list or create turns the feature off; on one id, or ungated, it is just not_found",
          arguments: TransportKind.allCases)
    func notFound(kind: TransportKind) throws {
        let h = try Harness(kind) { _, _ in errorResponse(404, "not_found") }
        // A missing webhook, or a missing application, is not a missing feature.
        #expect(hubError { try h.client.get("/webhooks/whk_gone", feature: "webhooks") }?.code == "not_found")
        #expect(hubError { try h.client.post("/applications/app_x/notifications", body: [:], feature: "send_notifications") }?.code
            == "not_found")
        #expect(h.client.isFeatureEnabled("webhooks") && h.client.isFeatureEnabled("send_notifications"))
        #expect(hubError { try h.client.post("/webhooks", body: [:], feature: "webhooks") }?.code == HubError.Code.featureDisabled)
        #expect(!h.client.isFeatureEnabled("webhooks"))
        #expect(hubError { try h.client.get("/users/usr_missing") }?.code == "not_found")
        #expect(h.warnings.warnings.count == 1)
    }

    @Test("501 on any request of a feature turns it off, one id or not", arguments: TransportKind.allCases)
    func notImplementedOnOneID(kind: TransportKind) throws {
        let h = try Harness(kind) { _, _ in errorResponse(501, "not_implemented") }
        #expect(hubError { try h.client.get("/webhooks/whk_1", feature: "webhooks") }?.code == HubError.Code.featureDisabled)
        #expect(hubError { try h.client.get("/webhooks", feature: "webhooks") }?.code == HubError.Code.featureDisabled)
        #expect(h.requests.count == 1)
        #expect(h.warnings.warnings == [
            "the Hub does not offer 'webhooks' (HTTP 501 not_implemented); calls to it are off for this run."
        ])
    }

    @Test("Deprecation / Sunset produce one warning per client", arguments: TransportKind.allCases)
    func deprecation(kind: TransportKind) throws {
        let h = try Harness(kind) { _, _ in
            jsonResponse(["ok": true], headers: [("Deprecation", "true"), ("Sunset", "Wed, 31 Dec 2026 23:59:59 GMT")])
        }
        for _ in 0..<5 { _ = try h.client.get("/users/me") }
        #expect(h.warnings.warnings == [
            "the Hub marks this API version as deprecated (Deprecation: true); it stops working at Wed, 31 Dec 2026 23:59:59 GMT. Upgrade hubscript before then."
        ])
    }

    @Test("unsupported_api_version stops all further traffic", arguments: TransportKind.allCases)
    func unsupportedVersion(kind: TransportKind) throws {
        let h = try Harness(kind) { _, _ in errorResponse(400, "unsupported_api_version") }
        #expect(hubError { try h.client.get("/users/me") }?.code == "unsupported_api_version")
        #expect(h.client.haltError?.code == "unsupported_api_version")
        let later = hubError { try h.client.post("/users/usr_1/suspend", body: [:], idempotencyKey: "k") }
        #expect(later?.code == HubError.Code.clientHalted)
        #expect(hubError { try h.client.paginate(path: "/users").allItems() }?.code == HubError.Code.clientHalted)
        #expect(h.requests.count == 1)
    }
}
