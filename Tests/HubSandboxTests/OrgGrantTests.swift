import Foundation
import XCTest
@testable import HubSandbox

/// `PATCH /entitlements/{id}` beyond status: expired → active, `ends_at`, `source`.
final class EntitlementPatchMoreTests: XCTestCase {
    func testExpiredBackToActiveNeedsAFutureEnd() throws {
        let hub = try makeHub()
        let noEnd = hub.call("PATCH", "/entitlements/ent_ada_analytics", body: #"{"status":"active"}"#)
        XCTAssertEqual(noEnd.status, 422, noEnd.text)
        XCTAssertEqual(noEnd.json["error"]?["details"]?["fields"]?[0]?["code"]?.string, "required")
        XCTAssertEqual(hub.call("PATCH", "/entitlements/ent_ada_analytics",
                                body: #"{"status":"active","ends_at":"2001-01-01T00:00:00Z"}"#).json["error"]?["details"]?["fields"]?[0]?["code"]?.string,
                       "not_in_future")
        let renewed = hub.call("PATCH", "/entitlements/ent_ada_analytics", body: #"{"status":"active","ends_at":null}"#)
        XCTAssertEqual(renewed.status, 200, renewed.text)
        XCTAssertEqual(renewed.json["status"]?.string, "active")
        XCTAssertEqual(renewed.json["ends_at"], .null)
        let events = hub.call("GET", "/audit-events?target_id=ent_ada_analytics&action=entitlement.updated").json["data"]?.items ?? []
        XCTAssertEqual(events.count, 1)
    }

    func testSourceOnlyFromTrialToPurchase() throws {
        let hub = try makeHub()
        let bought = hub.call("PATCH", "/entitlements/ent_ada_analytics", body: #"{"source":"purchase"}"#)
        XCTAssertEqual(bought.status, 200, bought.text)
        XCTAssertEqual(bought.json["source"]?.string, "purchase")
        let back = hub.call("PATCH", "/entitlements/ent_ada_analytics", body: #"{"source":"trial"}"#)
        XCTAssertEqual(back.status, 422)
        XCTAssertEqual(back.code, "immutable_field")
        XCTAssertEqual(hub.call("PATCH", "/entitlements/ent_ada_wiki", body: #"{"source":"purchase"}"#).code, "immutable_field")
        XCTAssertEqual(hub.call("PATCH", "/entitlements/ent_ada_wiki", body: #"{"application_id":"app_crm"}"#).code, "read_only_field")
    }
}

/// `POST /organizations/{id}/entitlements` and member scope changes.
final class OrgGrantTests: XCTestCase {
    private func grant(_ hub: HubSandbox, _ body: String, key: String = UUID().uuidString) -> Resp {
        hub.call("POST", "/organizations/org_acme/entitlements", body: body, headers: [("Idempotency-Key", key)])
    }

    private func seats(_ hub: HubSandbox, _ user: String, _ app: String) -> [String] {
        (hub.call("GET", "/users/\(user)/entitlements?application_id=\(app)&include_inactive=true").json["data"]?.items ?? [])
            .filter { $0["source"]?.string == "org_seat" }.compactMap { $0["status"]?.string }
    }

    func testAllowlistGrantSeatsOnlyTheListedMembers() throws {
        let hub = try makeHub()
        XCTAssertEqual(hub.call("POST", "/organizations/org_acme/entitlements", body: #"{"application_id":"app_chat"}"#).code,
                       "idempotency_key_required")
        let r = grant(hub, #"{"application_id":"app_chat","member_scope":"allowlist","member_overrides":["usr_ada"]}"#)
        XCTAssertEqual(r.status, 201, r.text)
        let id = try XCTUnwrap(r.json["id"]?.string)
        XCTAssertEqual(r.json["user_id"], .null)
        XCTAssertEqual(r.json["source"]?.string, "org_seat")
        XCTAssertEqual(r.json["member_scope"]?.string, "allowlist")
        XCTAssertEqual(r.json["included_member_count"]?.int, 1)
        XCTAssertEqual(seats(hub, "usr_ada", "app_chat"), ["active"])
        XCTAssertEqual(seats(hub, "usr_support", "app_chat"), [])
        let events = hub.call("GET", "/audit-events?action=entitlement.granted&organization_id=org_acme&application_id=app_chat").json["data"]?.items ?? []
        XCTAssertEqual(events.count, 1)
        XCTAssertEqual(events.first?["target"]?["id"]?.string, id)
        let again = grant(hub, #"{"application_id":"app_chat"}"#)
        XCTAssertEqual(again.status, 409)
        XCTAssertEqual(again.code, "entitlement_already_exists")
        XCTAssertEqual(again.json["error"]?["details"]?["existing_entitlement_id"]?.string, id)
        XCTAssertEqual(hub.call("GET", "/entitlements/\(id)").json["member_overrides"]?.items.compactMap(\.string), ["usr_ada"])
    }

    func testValidation() throws {
        let hub = try makeHub()
        let stranger = grant(hub, #"{"application_id":"app_chat","member_scope":"allowlist","member_overrides":["usr_nobody"]}"#)
        XCTAssertEqual(stranger.status, 422)
        XCTAssertEqual(stranger.code, "member_override_not_a_member")
        XCTAssertEqual(stranger.json["error"]?["details"]?["user_ids"]?.items.compactMap(\.string), ["usr_nobody"])
        let bad = grant(hub, #"{"application_id":"app_nope","source":"trial","member_scope":"everyone"}"#)
        XCTAssertEqual(bad.json["error"]?["details"]?["fields"]?.items.compactMap { $0["field"]?.string }, ["application_id", "source", "member_scope"])
        XCTAssertEqual(grant(hub, #"{"application_id":"app_chat","member_overrides":["usr_ada"]}"#)
                        .json["error"]?["details"]?["fields"]?[0]?["code"]?.string, "not_allowed_with_all_members")
        XCTAssertEqual(hub.call("PATCH", "/entitlements/ent_ada_wiki", body: #"{"member_scope":"denylist"}"#).code, "not_an_org_grant")
        XCTAssertEqual(hub.call("POST", "/organizations/org_acme/entitlements", token: SandboxFixtures.supportKeySecret,
                                body: #"{"application_id":"app_chat"}"#, headers: [("Idempotency-Key", "x")]).code, "forbidden")
    }

    func testScopeAndStatusChangesMoveTheSeats() throws {
        let hub = try makeHub()
        let r = grant(hub, #"{"application_id":"app_chat"}"#)
        let id = try XCTUnwrap(r.json["id"]?.string)
        let members = hub.call("GET", "/organizations/org_acme/members?limit=100").json["data"]?.items.count ?? 0
        XCTAssertEqual(r.json["included_member_count"]?.int, members)
        XCTAssertEqual(seats(hub, "usr_ada", "app_chat"), ["active"])
        let deny = hub.call("PATCH", "/entitlements/\(id)", body: #"{"member_scope":"denylist","member_overrides":["usr_ada"]}"#)
        XCTAssertEqual(deny.status, 200, deny.text)
        XCTAssertEqual(deny.json["included_member_count"]?.int, members - 1)
        XCTAssertEqual(seats(hub, "usr_ada", "app_chat"), ["revoked"])
        XCTAssertEqual(hub.call("GET", "/audit-events?action=entitlement.member_scope_changed&target_id=\(id)").json["data"]?.items.count, 1)
        let disabled = hub.call("PATCH", "/entitlements/\(id)", body: #"{"status":"disabled","disabled_reason":"license review"}"#)
        XCTAssertEqual(disabled.status, 200, disabled.text)
        XCTAssertEqual(seats(hub, "usr_support", "app_chat"), ["disabled"])
        XCTAssertEqual(hub.call("PATCH", "/entitlements/\(id)", body: #"{"status":"revoked","disabled_reason":"done"}"#).status, 200)
        XCTAssertEqual(seats(hub, "usr_support", "app_chat"), ["revoked"])
        let listed = hub.call("GET", "/entitlements?organization_id=org_acme&application_id=app_chat&include_inactive=true&limit=100").json["data"]?.items ?? []
        XCTAssertEqual(listed.filter { $0["user_id"] == .null }.count, 1)
    }
}
