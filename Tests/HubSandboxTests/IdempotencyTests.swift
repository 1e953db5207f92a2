import Foundation
import XCTest
@testable import HubSandbox

/// Replay with `Idempotent-Replayed`, reused keys, in-flight keys, per-caller scope.
final class IdempotencyTests: XCTestCase {
    let body = #"{"application_id":"app_chat","source":"trial"}"#

    func testSameKeySameBodyReplaysTheStoredResponse() throws {
        let hub = try makeHub()
        let first = hub.call("POST", "/users/usr_ada/entitlements", body: body, headers: [("Idempotency-Key", "r1")])
        XCTAssertEqual(first.status, 201)
        XCTAssertNil(first.headers["Idempotent-Replayed"])
        let again = hub.call("POST", "/users/usr_ada/entitlements", body: body, headers: [("Idempotency-Key", "r1")])
        XCTAssertEqual(again.status, 201)
        XCTAssertEqual(again.body, first.body)
        XCTAssertEqual(again.headers["Idempotent-Replayed"], "true")
        XCTAssertEqual(again.headers["ETag"], first.headers["ETag"])
    }

    func testSameKeyOtherBodyIsReused() throws {
        let hub = try makeHub()
        hub.call("POST", "/users/usr_ada/entitlements", body: body, headers: [("Idempotency-Key", "r2")])
        let r = hub.call("POST", "/users/usr_ada/entitlements", body: #"{"application_id":"app_chat","source":"purchase"}"#,
                         headers: [("Idempotency-Key", "r2")])
        XCTAssertEqual(r.status, 409)
        XCTAssertEqual(r.code, "idempotency_key_reused")
    }

    func testKeysAreScopedPerCaller() throws {
        let hub = try makeHub()
        XCTAssertEqual(hub.call("POST", "/users/usr_ada/entitlements", body: body, headers: [("Idempotency-Key", "r3")]).status, 201)
        let other = hub.call("POST", "/users/usr_ada/entitlements", token: SandboxFixtures.opsKeySecret, body: body,
                             headers: [("Idempotency-Key", "r3")])
        XCTAssertEqual(other.code, "entitlement_already_exists")
        XCTAssertNil(other.headers["Idempotent-Replayed"])
    }

    func testErrorsAreReplayedToo() throws {
        let hub = try makeHub()
        let conflict = #"{"application_id":"app_crm","source":"trial"}"#
        let a = hub.call("POST", "/users/usr_ada/entitlements", body: conflict, headers: [("Idempotency-Key", "r4")])
        XCTAssertEqual(a.code, "entitlement_already_exists")
        let b = hub.call("POST", "/users/usr_ada/entitlements", body: conflict, headers: [("Idempotency-Key", "r4")])
        XCTAssertEqual(b.code, "entitlement_already_exists")
        XCTAssertEqual(b.headers["Idempotent-Replayed"], "true")
    }

    func testKeyStillRunningIsInFlight() throws {
        let hub = try makeHub()
        let entered = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        hub.afterReservation = { key in
            if key == "slow" { entered.signal(); release.wait() }
        }
        let done = DispatchSemaphore(value: 0)
        let box = ResultBox()
        let body = self.body
        Thread.detachNewThread {
            box.status = hub.call("POST", "/users/usr_ada/entitlements", body: body, headers: [("Idempotency-Key", "slow")]).status
            done.signal()
        }
        entered.wait()
        let second = hub.call("POST", "/users/usr_ada/entitlements", body: body, headers: [("Idempotency-Key", "slow")])
        XCTAssertEqual(second.status, 409)
        XCTAssertEqual(second.code, "idempotency_key_in_flight")
        XCTAssertEqual(second.headers["Retry-After"], "1")
        release.signal()
        done.wait()
        XCTAssertEqual(box.status, 201)
        hub.afterReservation = nil
        XCTAssertEqual(hub.call("POST", "/users/usr_ada/entitlements", body: body, headers: [("Idempotency-Key", "slow")])
            .headers["Idempotent-Replayed"], "true")
    }

    func testKeysExpireAfter24Hours() throws {
        let clock = ManualClock()
        let hub = try makeHub(clock: clock)
        hub.call("POST", "/users/usr_ada/roles/role_support", body: "{}", headers: [("Idempotency-Key", "old")])
        clock.advance(by: 86_400)
        let r = hub.call("POST", "/users/usr_ada/roles/role_support", body: "{}", headers: [("Idempotency-Key", "old")])
        XCTAssertEqual(r.status, 200)
        XCTAssertNil(r.headers["Idempotent-Replayed"])
    }

    func testOverlongKeyIsInvalid() throws {
        let hub = try makeHub()
        let r = hub.call("POST", "/users/usr_ada/roles/role_support", body: "{}", headers: [("Idempotency-Key", String(repeating: "k", count: 256))])
        XCTAssertEqual(r.code, "invalid_request")
    }
}

final class ResultBox: @unchecked Sendable {
    var status = 0
}
