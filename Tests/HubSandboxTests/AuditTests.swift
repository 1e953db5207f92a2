import SQLiteKit
import XCTest
@testable import HubSandbox

/// Exactly one audit event per change, none on a replay; event shape and filters.
final class AuditTests: XCTestCase {
    func events(_ hub: HubSandbox, _ query: String = "target_user_id=usr_ada") -> [JSON] {
        hub.call("GET", "/audit-events?limit=100&\(query)").json["data"]?.items ?? []
    }

    func testEachChangeWritesOneEvent() throws {
        let hub = try makeHub()
        let before = events(hub).count
        let steps: [(String, String, String?, String)] = [
            ("POST", "/users/usr_ada/entitlements", #"{"application_id":"app_chat","source":"trial"}"#, "entitlement.granted"),
            ("PATCH", "/entitlements/ent_ada_wiki", #"{"status":"disabled","disabled_reason":"x"}"#, "entitlement.disabled"),
            ("PATCH", "/entitlements/ent_ada_wiki", #"{"status":"active"}"#, "entitlement.enabled"),
            ("PATCH", "/entitlements/ent_ada_crm", #"{"status":"revoked","disabled_reason":"gone"}"#, "entitlement.revoked"),
            ("POST", "/users/usr_ada/roles/role_support", "{}", "role.assigned"),
            ("DELETE", "/users/usr_ada/roles/role_support", nil, "role.removed"),
            ("DELETE", "/users/usr_ada/sessions/ses_ada_phone", nil, "session.revoked"),
            ("DELETE", "/api-keys/key_ada_cli", nil, "api_key.revoked"),
            ("DELETE", "/organizations/org_acme/members/usr_ada", nil, "organization.member_removed"),
            ("POST", "/applications/app_wiki/notifications", #"{"user_id":"usr_ada","title":"Hi","body":"There","category":"account.test"}"#, "notification.sent"),
            ("PATCH", "/users/usr_ada", #"{"display_name":"Ada B"}"#, "user.updated"),
            ("POST", "/users/usr_ada/suspend", #"{"reason":"offboard"}"#, "user.suspended"),
            ("POST", "/users/usr_ada/reactivate", "{}", "user.reactivated"),
        ]
        for (i, step) in steps.enumerated() {
            let r = hub.call(step.0, step.1, body: step.2, headers: [("Idempotency-Key", "a\(i)"), ("X-Request-Id", "req-\(i)")])
            XCTAssertLessThan(r.status, 300, "\(step.1): \(r.text)")
            let all = events(hub)
            XCTAssertEqual(all.count, before + i + 1, step.3)
            XCTAssertEqual(all.first?["action"]?.string, step.3)
            XCTAssertEqual(all.first?["request_id"]?.string, "req-\(i)")
            XCTAssertEqual(all.first?["actor"], .object([("type", .string("api_key")), ("id", .string("key_jobs"))]))
        }
        // Changes that change nothing write nothing.
        hub.call("DELETE", "/users/usr_ada/roles/role_support")
        hub.call("DELETE", "/api-keys/key_ada_cli")
        hub.call("DELETE", "/users/usr_ada/sessions/ses_ada_phone")
        XCTAssertEqual(events(hub).count, before + steps.count)
    }

    func testReplayWritesNoEvent() throws {
        let hub = try makeHub()
        let before = events(hub).count
        for _ in 0..<3 {
            hub.call("POST", "/users/usr_ada/entitlements", body: #"{"application_id":"app_chat","source":"trial"}"#,
                     headers: [("Idempotency-Key", "once")])
        }
        XCTAssertEqual(events(hub).count, before + 1)
    }

    func testFailedWriteLeavesNoTrace() throws {
        let hub = try makeHub()
        let before = events(hub).count
        hub.call("PATCH", "/entitlements/ent_ada_analytics", body: #"{"status":"active"}"#)
        hub.call("POST", "/users/usr_ada/roles/role_billing_admin", token: SandboxFixtures.supportKeySecret, body: "{}")
        XCTAssertEqual(events(hub).count, before)
    }

    func testFiltersAndSingleEvent() throws {
        let hub = try makeHub()
        let ada = events(hub)
        XCTAssertGreaterThanOrEqual(ada.count, 5)
        XCTAssertTrue(ada.allSatisfy { $0["target_user_id"]?.string == "usr_ada" })
        let disabled = events(hub, "action=entitlement.disabled&action=entitlement.revoked")
        XCTAssertTrue(disabled.allSatisfy { ["entitlement.disabled", "entitlement.revoked"].contains($0["action"]?.string ?? "") })
        let one = hub.call("GET", "/audit-events/evt_ada_crm")
        XCTAssertEqual(one.json["target"]?["id"]?.string, "ent_ada_crm")
        XCTAssertEqual(one.json["after"]?["status"]?.string, "disabled")
        let since = hub.call("GET", "/audit-events?limit=100&since=2026-01-01T00:00:00Z&until=2026-01-01T00:00:00Z").json["data"]?.items
        XCTAssertEqual(since?.count, 0)
    }

    func testSeededEventsSpanTheLast90Days() throws {
        let clock = ManualClock()
        let hub = try makeHub(clock: clock, auditEvents: 500)
        let now = Int(clock.now().timeIntervalSince1970)
        let oldest = Time.format(now - 90 * 86_400)
        let all = hub.call("GET", "/audit-events?limit=100&since=\(oldest)").json["data"]?.items ?? []
        XCTAssertEqual(all.count, 100)
        XCTAssertEqual(hub.call("GET", "/audit-events?until=\(oldest)").json["data"]?.items.count, 0)
    }
}

/// The audit list's direct row writer against the JSON-tree rendering of the same rows.
final class AuditRowWriterTests: XCTestCase {
    func testWriterMatchesTreeForEveryRow() throws {
        let hub = try makeHub()
        let reason = #"q\"uote \\ \n\t\u0001 é 日本 😀"#
        XCTAssertEqual(hub.call("PATCH", "/entitlements/ent_ada_wiki", body: #"{"status":"disabled","disabled_reason":"\#(reason)"}"#).status, 200)
        let db = hub.engine.db
        try db.run("""
            INSERT INTO audit_events(id, action, actor_type, actor_id, target_type, target_id, target_user_id, application_id,
              organization_id, before, after, request_id, ts) VALUES ('evt_odd', 'x"y', 'system', NULL, 't\u{1}', 'é', NULL, NULL,
              NULL, 'not json', '{"a": [1, 2.50, "\\u00e9"], "a": true}', NULL, -5)
            """)
        var rows = 0
        try db.query("SELECT \(HubEngine.auditColumns) FROM audit_events") { s in
            var direct: [UInt8] = []
            HubEngine.writeAuditJSON(s, into: &direct)
            XCTAssertEqual(String(decoding: direct, as: UTF8.self), String(decoding: HubEngine.auditJSON(s).data, as: UTF8.self))
            rows += 1
        }
        XCTAssertGreaterThan(rows, 200)
    }
}
