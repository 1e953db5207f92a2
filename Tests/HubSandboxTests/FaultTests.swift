import SQLiteKit
import XCTest
@testable import HubSandbox

/// Fault specs: parsing, deterministic draws, failing before any change, lost after commit.
final class FaultTests: XCTestCase {
    func testParsing() throws {
        let f = try FaultSpec(parsing: "error=0.1,unavailable=0.05,retry_after=2,latency=20ms,lost=0.1,seed=7")
        XCTAssertEqual(f.errorRate, 0.1)
        XCTAssertEqual(f.unavailableRate, 0.05)
        XCTAssertEqual(f.retryAfterSeconds, 2)
        XCTAssertEqual(f.latency, .milliseconds(20))
        XCTAssertEqual(f.lostRate, 0.1)
        XCTAssertEqual(f.seed, 7)
        XCTAssertEqual(try FaultSpec(parsing: "latency=1s").latency, .seconds(1))
        XCTAssertTrue(try FaultSpec(parsing: "none").isNone)
        XCTAssertThrowsError(try FaultSpec(parsing: "error=2")) { error in
            XCTAssertEqual((error as? FaultSpecError)?.message, "bad fault spec: error=2 must be a probability between 0 and 1")
        }
        XCTAssertThrowsError(try FaultSpec(parsing: "boom=1")) { error in
            XCTAssertEqual((error as? FaultSpecError)?.message,
                           "unknown fault 'boom'; known: error, unavailable, retry_after, latency, lost, dup, reorder, unimplemented, seed")
        }
        XCTAssertThrowsError(try FaultSpec(parsing: "error")) { error in
            XCTAssertEqual((error as? FaultSpecError)?.message, "bad fault spec entry 'error': expected key=value")
        }
        XCTAssertThrowsError(try FaultSpec(parsing: "latency=fast")) { error in
            XCTAssertEqual((error as? FaultSpecError)?.message, "bad fault spec: latency=fast must look like 20ms or 1s")
        }
    }

    func testErrorsAreDeterministicForASeedAndChangeNothing() throws {
        let spec = try FaultSpec(parsing: "error=0.3,unavailable=0.2,retry_after=4,seed=7")
        func statuses() throws -> [Int] {
            let hub = try makeHub(faults: spec)
            return (0..<40).map { _ in hub.call("GET", "/users/usr_ada").status }
        }
        let a = try statuses(), b = try statuses()
        XCTAssertEqual(a, b)
        XCTAssertTrue(a.contains(500) && a.contains(503) && a.contains(200))
        let hub = try makeHub(faults: spec)
        var expected = "Ada Lovelace", failures = 0
        for i in 0..<30 {
            let r = hub.call("PATCH", "/users/usr_ada", body: #"{"display_name":"Ada \#(i)"}"#)
            if r.status == 503 { XCTAssertEqual(r.headers["Retry-After"], "4"); XCTAssertEqual(r.code, "service_unavailable") }
            if r.status >= 500 { failures += 1 } else { XCTAssertEqual(r.status, 200); expected = "Ada \(i)" }
            let stored = try hub.engine.db.first("SELECT display_name FROM users WHERE id = 'usr_ada'") { $0.text(0) }
            XCTAssertEqual(stored, expected)
        }
        XCTAssertGreaterThan(failures, 0)
    }

    func testFailedRequestsChangeNothing() throws {
        let hub = try makeHub(faults: try FaultSpec(parsing: "error=1"))
        let r = hub.call("POST", "/users/usr_ada/suspend", body: "{}")
        XCTAssertEqual(r.status, 500)
        XCTAssertEqual(r.code, "internal_error")
        let status = try hub.engine.db.first("SELECT status FROM users WHERE id = 'usr_ada'") { $0.text(0) }
        XCTAssertEqual(status, "active")
        XCTAssertEqual(hub.call("GET", "/health", token: nil).status, 200)
    }

    func testLostResponseIsCommittedAndReplayable() throws {
        let hub = try makeHub(faults: try FaultSpec(parsing: "lost=1"))
        let body = #"{"application_id":"app_chat","source":"trial"}"#
        let r = hub.call("POST", "/users/usr_ada/entitlements", body: body, headers: [("Idempotency-Key", "lost")])
        XCTAssertTrue(r.dropped)
        XCTAssertEqual(r.status, 201)
        let stored = try hub.engine.db.first("SELECT COUNT(*) FROM entitlements WHERE user_id = 'usr_ada' AND application_id = 'app_chat' AND status = 'active'") { $0.int(0) }
        XCTAssertEqual(stored, 1)
        let retry = hub.call("POST", "/users/usr_ada/entitlements", body: body, headers: [("Idempotency-Key", "lost")])
        XCTAssertEqual(retry.headers["Idempotent-Replayed"], "true")
        XCTAssertEqual(retry.json["id"], r.json["id"])
    }

    func testLatencyIsAdded() throws {
        let hub = try makeHub(faults: try FaultSpec(parsing: "latency=30ms"))
        let start = Date()
        hub.call("GET", "/users/usr_ada")
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(start), 0.03)
    }
}
