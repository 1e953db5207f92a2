import Foundation
import HTTPKit
import XCTest
@testable import HubSandbox

/// `StoredDispatchSandbox`: sends and idempotency records kept in the sandbox file,
/// shared by instances (processes) that open it, and faults on sends.
final class StoredDispatchTests: XCTestCase {
    func send(_ d: StoredDispatchSandbox, title: String = "t", key: String?) -> HTTPResponseMessage {
        var h = HTTPHeaders([("Authorization", "Bearer " + DispatchOptions.sandboxMachineToken)])
        if let key { h.add("Idempotency-Key", key) }
        return d.handle(HTTPRequestMessage(method: "POST", target: "/v1/notifications", headers: h,
                                           body: Data(#"{"body":"b","title":"\#(title)"}"#.utf8)))
    }

    func testSendsAndKeysOutliveTheInstance() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("stored-dispatch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("hub.sqlite")
        let first = try StoredDispatchSandbox(storage: .file(file))
        let a = send(first, key: "k1")
        XCTAssertEqual(a.status, 202)
        XCTAssertEqual(send(first, key: nil).status, 202)

        let second = try StoredDispatchSandbox(storage: .file(file))   // another process, later
        let replay = send(second, key: "k1")
        XCTAssertEqual(replay.status, 202)
        XCTAssertEqual(replay.headers["Idempotent-Replayed"], "true")
        XCTAssertEqual(replay.body, a.body)
        XCTAssertEqual(send(second, title: "other", key: "k1").status, 409)
        let sent = try second.sentNotifications()
        XCTAssertEqual(sent.map(\.idempotencyKey), ["k1", nil])
        XCTAssertEqual(sent.map(\.machine), ["sandbox-ci", "sandbox-ci"])
        XCTAssertEqual(try first.sentNotifications(), sent)

        // The Hub sandbox opens and seeds the same file as before.
        let hub = try HubSandbox(options: SandboxOptions(storage: .file(file), rateLimits: .off))
        XCTAssertEqual(hub.handle(HTTPRequestMessage(method: "GET", target: "/health")).status, 200)
    }

    func testUnknownTokensAreRefusedAndNotRecorded() throws {
        let d = try StoredDispatchSandbox(storage: .memory)
        let r = d.handle(HTTPRequestMessage(method: "POST", target: "/v1/notifications", headers: ["Idempotency-Key": "k"],
                                            body: Data(#"{"body":"b","title":"t"}"#.utf8)))
        XCTAssertEqual(r.status, 401)
        XCTAssertEqual(try d.sentNotifications(), [])
        XCTAssertEqual(d.handle(HTTPRequestMessage(method: "GET", target: "/health")).status, 200)
    }

    func testFaults() throws {
        let failing = try StoredDispatchSandbox(storage: .memory, faults: FaultSpec(unavailableRate: 1, retryAfterSeconds: 3))
        let r = send(failing, key: "k")
        XCTAssertEqual(r.status, 503)
        XCTAssertEqual(r.headers["Retry-After"], "3")
        XCTAssertEqual(try failing.sentNotifications(), [])

        let losing = try StoredDispatchSandbox(storage: .memory, faults: FaultSpec(lostRate: 1))
        XCTAssertTrue(send(losing, key: "k").dropped)
        XCTAssertEqual(try losing.sentNotifications().count, 1, "a lost response was accepted first")
        let again = send(losing, key: "k")
        XCTAssertEqual(again.headers["Idempotent-Replayed"], "true")
        XCTAssertEqual(try losing.sentNotifications().count, 1)
    }
    func testEachMachineMaySend600AMinute() throws {
        let clock = ManualClock()
        let d = try StoredDispatchSandbox(storage: .memory, rateLimits: .standard, clock: clock)
        for i in 0..<600 {
            let r = send(d, title: "n\(i)", key: "k\(i)")
            XCTAssertEqual(r.status, 202)
            XCTAssertEqual(r.headers["RateLimit-Remaining"], String(599 - i))
        }
        let limited = send(d, title: "n600", key: "k600")
        XCTAssertEqual(limited.status, 429)
        XCTAssertEqual(String(decoding: limited.body, as: UTF8.self),
                       #"{"error":{"code":"rate_limited","message":"Too many sends from this machine token (600 a minute); retry after 1 s."}}"#)
        XCTAssertEqual(limited.headers["Retry-After"], "1")
        XCTAssertEqual(limited.headers["RateLimit-Limit"], "600")
        // A replay is not a new send: answered from the store, limit or not.
        XCTAssertEqual(send(d, title: "n0", key: "k0").headers["Idempotent-Replayed"], "true")
        XCTAssertEqual(try d.sentNotifications().count, 600)
        clock.advance(by: 1)   // 10 tokens back
        XCTAssertEqual(send(d, title: "n600", key: "k600").status, 202)

        let unlimited = try StoredDispatchSandbox(storage: .memory, clock: clock)   // the default: off, as embedded
        for i in 0..<700 { XCTAssertEqual(send(unlimited, title: "n\(i)", key: nil).status, 202) }
    }
}
