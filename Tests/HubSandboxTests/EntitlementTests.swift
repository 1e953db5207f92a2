import XCTest
@testable import HubSandbox

/// Grants, the one-live-row rule, status transitions, validation, read-only fields.
final class EntitlementTests: XCTestCase {
    func grant(_ hub: HubSandbox, user: String = "usr_ada", app: String, key: String, token: String = jobsKey) -> Resp {
        hub.call("POST", "/users/\(user)/entitlements", token: token, body: #"{"application_id":"\#(app)","source":"admin_grant"}"#,
                 headers: [("Idempotency-Key", key)])
    }

    func testGrantCreatesAnActiveEntitlement() throws {
        let hub = try makeHub()
        let r = grant(hub, app: "app_chat", key: "k1")
        XCTAssertEqual(r.status, 201, r.text)
        XCTAssertEqual(r.json["status"]?.string, "active")
        XCTAssertEqual(r.json["source"]?.string, "admin_grant")
        XCTAssertEqual(r.headers["ETag"], "W/\"1\"")
        let id = try XCTUnwrap(r.json["id"]?.string)
        XCTAssertEqual(hub.call("GET", "/entitlements/\(id)").json["application_id"]?.string, "app_chat")
    }

    func testSecondLiveGrantConflictsWithTheExistingId() throws {
        let hub = try makeHub()
        let r = grant(hub, app: "app_crm", key: "k2")
        XCTAssertEqual(r.status, 409)
        XCTAssertEqual(r.code, "entitlement_already_exists")
        XCTAssertEqual(r.json["error"]?["details"]?["existing_entitlement_id"]?.string, "ent_ada_crm")
    }

    func testGrantValidation() throws {
        let hub = try makeHub()
        let r = hub.call("POST", "/users/usr_ada/entitlements", body: #"{"application_id":"app_nope","source":"gift"}"#,
                         headers: [("Idempotency-Key", "v1")])
        XCTAssertEqual(r.status, 422)
        XCTAssertEqual(r.code, "validation_failed")
        XCTAssertEqual(r.json["error"]?["details"]?["fields"]?.items.compactMap { $0["field"]?.string }, ["application_id", "source"])
    }

    func testGrantNeedsAnIdempotencyKey() throws {
        let hub = try makeHub()
        let r = hub.call("POST", "/users/usr_ada/entitlements", body: #"{"application_id":"app_chat","source":"trial"}"#)
        XCTAssertEqual(r.status, 400)
        XCTAssertEqual(r.code, "idempotency_key_required")
    }

    func testStatusTransitions() throws {
        let hub = try makeHub()
        func patch(_ body: String) -> Resp { hub.call("PATCH", "/entitlements/ent_ada_wiki", body: body) }
        XCTAssertEqual(patch(#"{"status":"disabled"}"#).json["error"]?["details"]?["fields"]?[0]?["field"]?.string, "disabled_reason")
        let disabled = patch(#"{"status":"disabled","disabled_reason":"audit"}"#)
        XCTAssertEqual(disabled.status, 200)
        XCTAssertEqual(disabled.json["status"]?.string, "disabled")
        XCTAssertEqual(disabled.headers["ETag"], "W/\"2\"")
        let enabled = patch(#"{"status":"active"}"#)
        XCTAssertEqual(enabled.json["status"]?.string, "active")
        XCTAssertEqual(enabled.json["disabled_reason"], .null)
        XCTAssertEqual(patch(#"{"status":"active"}"#).code, "invalid_status_transition")
        XCTAssertEqual(patch(#"{"status":"expired"}"#).code, "invalid_status_transition")
        XCTAssertEqual(patch(#"{"status":"revoked","disabled_reason":"offboarded"}"#).json["status"]?.string, "revoked")
        let back = patch(#"{"status":"active"}"#)
        XCTAssertEqual(back.status, 422)
        XCTAssertEqual(back.json["error"]?["details"]?["from"]?.string, "revoked")
        // expired → active is allowed with a future or null ends_at (EntitlementPatchMoreTests); its ends_at is past.
        XCTAssertEqual(hub.call("PATCH", "/entitlements/ent_ada_analytics", body: #"{"status":"active"}"#).code, "validation_failed")
    }

    func testReadOnlyFields() throws {
        let hub = try makeHub()
        let r = hub.call("PATCH", "/entitlements/ent_ada_wiki", body: #"{"application_id":"app_crm"}"#)
        XCTAssertEqual(r.status, 422)
        XCTAssertEqual(r.code, "read_only_field")
        XCTAssertEqual(hub.call("PATCH", "/users/usr_ada", body: #"{"status":"active"}"#).code, "read_only_field")
    }

    func testRevokedAreHiddenUnlessAsked() throws {
        let hub = try makeHub()
        let ids = { (q: String) in hub.call("GET", "/users/usr_ada/entitlements\(q)").json["data"]?.items.compactMap { $0["id"]?.string } ?? [] }
        XCTAssertFalse(ids("").contains("ent_ada_chat"))
        XCTAssertTrue(ids("?include_inactive=true").contains("ent_ada_chat"))
        XCTAssertEqual(ids("?status=revoked"), ["ent_ada_chat"])
        XCTAssertEqual(ids("").count, 5)
    }

    func testUnknownEntitlementIsNotFound() throws {
        let hub = try makeHub()
        XCTAssertEqual(hub.call("GET", "/entitlements/ent_nope").code, "not_found")
    }
}
