import XCTest
@testable import HubSandbox

/// Cursors bound to filters and expiring, limits, ETag / If-Match, user status transitions.
final class ConventionTests: XCTestCase {
    func ids(_ r: Resp) -> [String] { r.json["data"]?.items.compactMap { $0["id"]?.string } ?? [] }

    func testCursorWalksWithoutOverlapAndIsBoundToFilters() throws {
        let hub = try makeHub(users: 80)
        let p1 = hub.call("GET", "/users?status=active&limit=10")
        let cursor = try XCTUnwrap(p1.json["page"]?["next_cursor"]?.string)
        let p2 = hub.call("GET", "/users?status=active&limit=10&cursor=\(cursor)")
        XCTAssertEqual(p2.status, 200)
        XCTAssertEqual(Set(ids(p1)).intersection(ids(p2)), [])
        XCTAssertEqual(ids(p2).count, 10)
        let other = hub.call("GET", "/users?status=suspended&limit=10&cursor=\(cursor)")
        XCTAssertEqual(other.status, 400)
        XCTAssertEqual(other.code, "invalid_cursor")
        XCTAssertEqual(hub.call("GET", "/users?limit=10&cursor=\(cursor)").code, "invalid_cursor")
        XCTAssertEqual(hub.call("GET", "/entitlements?status=active&cursor=\(cursor)").code, "invalid_cursor")
        XCTAssertEqual(hub.call("GET", "/users?cursor=garbage").code, "invalid_cursor")
        XCTAssertEqual(hub.call("GET", "/users?status=active&limit=5&unknown=1&cursor=\(cursor)").status, 200)
    }

    func testWalkingEveryPageVisitsEveryRowOnce() throws {
        let hub = try makeHub(users: 73)
        var seen: [String] = [], cursor: String?
        repeat {
            let r = hub.call("GET", "/users?include_inactive=true&limit=7" + (cursor.map { "&cursor=\($0)" } ?? ""))
            seen += ids(r)
            cursor = r.json["page"]?["next_cursor"]?.string
            XCTAssertEqual(r.json["page"]?["has_more"], .bool(cursor != nil))
        } while cursor != nil
        XCTAssertEqual(seen.count, 73)
        XCTAssertEqual(Set(seen).count, 73)
    }

    func testCursorExpiresAfter24Hours() throws {
        let clock = ManualClock()
        let hub = try makeHub(clock: clock)
        let cursor = try XCTUnwrap(hub.call("GET", "/audit-events?limit=5").json["page"]?["next_cursor"]?.string)
        clock.advance(by: 86_399)
        XCTAssertEqual(hub.call("GET", "/audit-events?limit=5&cursor=\(cursor)").status, 200)
        clock.advance(by: 1)
        XCTAssertEqual(hub.call("GET", "/audit-events?limit=5&cursor=\(cursor)").code, "invalid_cursor")
    }

    func testLimitDefaultsAndClamps() throws {
        let hub = try makeHub(users: 150)
        XCTAssertEqual(ids(hub.call("GET", "/users")).count, 25)
        XCTAssertEqual(ids(hub.call("GET", "/users?limit=1000")).count, 100)
        XCTAssertEqual(hub.call("GET", "/users?limit=0").code, "invalid_request")
    }

    func testListsAreNewestFirst() throws {
        let hub = try makeHub()
        let times = hub.call("GET", "/audit-events?limit=50").json["data"]?.items.compactMap { $0["timestamp"]?.string } ?? []
        XCTAssertEqual(times, times.sorted(by: >))
        let created = hub.call("GET", "/users?limit=50").json["data"]?.items.compactMap { $0["created_at"]?.string } ?? []
        XCTAssertEqual(created, created.sorted(by: >))
    }

    func testIfMatchAndVersionConflict() throws {
        let hub = try makeHub()
        let get = hub.call("GET", "/users/usr_ada")
        XCTAssertEqual(get.headers["ETag"], "W/\"1\"")
        let ok = hub.call("PATCH", "/users/usr_ada", body: #"{"display_name":"Ada King"}"#, headers: [("If-Match", "W/\"1\"")])
        XCTAssertEqual(ok.status, 200)
        XCTAssertEqual(ok.headers["ETag"], "W/\"2\"")
        XCTAssertEqual(ok.json["display_name"]?.string, "Ada King")
        let stale = hub.call("PATCH", "/users/usr_ada", body: #"{"display_name":"Ada"}"#, headers: [("If-Match", "W/\"1\"")])
        XCTAssertEqual(stale.status, 409)
        XCTAssertEqual(stale.code, "version_conflict")
        XCTAssertEqual(stale.json["error"]?["details"]?["current_etag"]?.string, "W/\"2\"")
        let ent = hub.call("PATCH", "/entitlements/ent_ada_wiki", body: #"{"status":"disabled","disabled_reason":"x"}"#,
                           headers: [("If-Match", "W/\"7\"")])
        XCTAssertEqual(ent.code, "version_conflict")
        XCTAssertEqual(hub.call("GET", "/entitlements/ent_ada_wiki").json["status"]?.string, "active")
    }

    func testRoleSetHasItsOwnETag() throws {
        let hub = try makeHub()
        let etag = try XCTUnwrap(hub.call("GET", "/users/usr_ada/roles").headers["ETag"])
        let assigned = hub.call("POST", "/users/usr_ada/roles/role_support", body: "{}", headers: [("If-Match", etag)])
        XCTAssertEqual(assigned.status, 201)
        let stale = hub.call("DELETE", "/users/usr_ada/roles/role_support", headers: [("If-Match", etag)])
        XCTAssertEqual(stale.code, "version_conflict")
        XCTAssertEqual(hub.call("DELETE", "/users/usr_ada/roles/role_support", headers: [("If-Match", assigned.headers["ETag"] ?? "")]).status, 204)
    }

    func testSuspendRevokesSessionsAndReactivate() throws {
        let hub = try makeHub()
        let token = hub.accessToken("ada@example.com")
        let s = hub.call("POST", "/users/usr_ada/suspend", body: #"{"reason":"offboarding"}"#)
        XCTAssertEqual(s.status, 200)
        XCTAssertEqual(s.json["status"]?.string, "suspended")
        XCTAssertEqual(hub.call("GET", "/users/me", token: token).code, "session_revoked")
        XCTAssertEqual(hub.call("GET", "/users/usr_ada/sessions").json["data"]?.items.count, 0)
        XCTAssertEqual(hub.call("GET", "/users/usr_ada/entitlements").json["data"]?.items.count, 5)
        XCTAssertEqual(hub.call("POST", "/users/usr_ada/suspend", body: "{}").code, "invalid_status_transition")
        XCTAssertEqual(hub.call("POST", "/users/usr_ada/reactivate", body: "{}").json["status"]?.string, "active")
        XCTAssertEqual(hub.call("POST", "/users/usr_ada/reactivate", body: "{}").code, "invalid_status_transition")
    }

    func testUserFilters() throws {
        let hub = try makeHub()
        XCTAssertEqual(ids(hub.call("GET", "/users?email=ada@example.com")), ["usr_ada"])
        XCTAssertEqual(ids(hub.call("GET", "/users?q=ada")), ["usr_ada"])
        XCTAssertEqual(hub.call("GET", "/users?q=ad").code, "validation_failed")
        let acme = ids(hub.call("GET", "/users?organization_id=org_acme&limit=100"))
        XCTAssertTrue(acme.contains("usr_ada"))
        let statuses = Set(hub.call("GET", "/users?limit=100").json["data"]?.items.compactMap { $0["status"]?.string } ?? [])
        XCTAssertFalse(statuses.contains("deleted"))
    }

    func testHealthNeedsNeitherVersionNorToken() throws {
        let hub = try makeHub()
        let r = hub.call("GET", "/health", token: nil, version: nil)
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(r.headers["Content-Type"], "application/json")
    }

    func testPayloadTooLarge() throws {
        let hub = try makeHub()
        let big = #"{"display_name":""# + String(repeating: "x", count: 1_048_576) + #""}"#
        let r = hub.call("PATCH", "/users/usr_ada", body: big)
        XCTAssertEqual(r.status, 413)
        XCTAssertEqual(r.code, "payload_too_large")
    }

    func testUnknownRouteAndMethod() throws {
        let hub = try makeHub()
        XCTAssertEqual(hub.call("GET", "/nope").code, "not_found")
        XCTAssertEqual(hub.call("PUT", "/users").status, 405)
        XCTAssertEqual(hub.call("GET", "/users/usr_nope").code, "not_found")
        XCTAssertEqual(hub.call("POST", "/users/usr_ada/roles/role_support", body: "{nope").code, "invalid_request")
    }
}
