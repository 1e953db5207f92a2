import CSodium
import Foundation
import HTTPKit
import XCTest
@testable import HubSandbox

/// A loopback receiver that records every delivery and answers with `statuses` in turn
/// (then 200).
final class DeliveryRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var statuses: [Int]
    private(set) var received: [HTTPRequestMessage] = []
    var server: HTTPServer!

    init(statuses: [Int] = []) throws {
        self.statuses = statuses
        server = try HTTPServer(port: 0) { [unowned self] request in
            let status = lock.withLock { () -> Int in
                received.append(request)
                return self.statuses.isEmpty ? 200 : self.statuses.removeFirst()
            }
            return HTTPResponseMessage(status: status)
        }
        server.start()
    }

    var url: String { "http://127.0.0.1:\(server.port)/hook" }
    var requests: [HTTPRequestMessage] { lock.withLock { received } }

    /// Waits (up to `timeout` seconds) until `count` deliveries arrived.
    func wait(for count: Int, timeout: Double = 10) -> [HTTPRequestMessage] {
        let deadline = Date().addingTimeInterval(timeout)
        while requests.count < count && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        return requests
    }
}

/// HMAC-SHA256 built here from SHA-256 (RFC 2104), independent of the sandbox's signer.
func referenceHMAC(key: [UInt8], message: [UInt8]) -> String {
    func sha(_ bytes: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        crypto_hash_sha256(&out, bytes, UInt64(bytes.count))
        return out
    }
    var k = key.count > 64 ? sha(key) : key
    k += [UInt8](repeating: 0, count: 64 - k.count)
    let inner = sha(k.map { $0 ^ 0x36 } + message)
    return sha(k.map { $0 ^ 0x5c } + inner).map { String(format: "%02x", $0) }.joined()
}

final class WebhookTests: XCTestCase {
    private func create(_ hub: HubSandbox, url: String, events: String = #"["*"]"#) -> JSON {
        let r = hub.call("POST", "/webhooks", body: #"{"url":"\#(url)","events":\#(events),"description":"test"}"#)
        XCTAssertEqual(r.status, 201, r.text)
        return r.json
    }

    func testCrudAndSecretShownOnlyOnCreateAndRotate() throws {
        let hub = try makeHub()
        let w = create(hub, url: "http://127.0.0.1:9/x")
        let id = try XCTUnwrap(w["id"]?.string)
        XCTAssertTrue(id.hasPrefix("whk_"))
        XCTAssertTrue(w["signing_secret"]?.string?.hasPrefix("whsec_") == true)
        XCTAssertEqual(w["status"]?.string, "healthy")
        let got = hub.call("GET", "/webhooks/\(id)")
        XCTAssertEqual(got.status, 200)
        XCTAssertNil(got.json["signing_secret"])
        XCTAssertFalse(got.text.contains("whsec_"))
        XCTAssertFalse(hub.call("GET", "/webhooks").text.contains("whsec_"))
        XCTAssertEqual(hub.call("GET", "/webhooks").json["data"]?.items.count, 1)
        let patched = hub.call("PATCH", "/webhooks/\(id)", body: #"{"events":["user.suspended"],"description":"d"}"#)
        XCTAssertEqual(patched.status, 200, patched.text)
        XCTAssertEqual(patched.json["events"]?.items.compactMap(\.string), ["user.suspended"])
        let rotated = hub.call("POST", "/webhooks/\(id)/rotate-secret")
        XCTAssertEqual(rotated.status, 200)
        XCTAssertNotEqual(rotated.json["signing_secret"]?.string, w["signing_secret"]?.string)
        XCTAssertNotNil(rotated.json["previous_secret_expires_at"]?.string)
        XCTAssertEqual(hub.call("POST", "/webhooks", body: #"{"url":"https://example.com/x","events":["*"]}"#).code, "invalid_webhook_url")
        XCTAssertEqual(hub.call("POST", "/webhooks", body: #"{"url":"http://127.0.0.1:9/x","events":["nope"]}"#).code, "unknown_event_type")
        XCTAssertEqual(hub.call("GET", "/webhooks", token: SandboxFixtures.supportKeySecret).status, 403)
        XCTAssertEqual(hub.call("DELETE", "/webhooks/\(id)").status, 204)
        XCTAssertEqual(hub.call("GET", "/webhooks/\(id)").code, "webhook_not_found")
        let actions = hub.call("GET", "/audit-events?target_id=\(id)").json["data"]?.items.compactMap { $0["action"]?.string }
        XCTAssertEqual(Set(actions ?? []), ["webhook.created", "webhook.updated", "webhook.secret_rotated", "webhook.deleted"])
    }

    func testDeliveryIsSignedPerTheReference() throws {
        let clock = ManualClock()
        let hub = try makeHub(clock: clock)
        let receiver = try DeliveryRecorder()
        let w = create(hub, url: receiver.url, events: #"["user.suspended"]"#)
        let secret = try XCTUnwrap(w["signing_secret"]?.string)
        hub.startWebhookDelivery()
        defer { hub.stopWebhookDelivery() }
        XCTAssertEqual(hub.call("POST", "/users/usr_ada/suspend", body: #"{"reason":"x"}"#).status, 200)
        let got = receiver.wait(for: 1)
        XCTAssertEqual(got.count, 1)
        let d = try XCTUnwrap(got.first)
        XCTAssertEqual(d.method, "POST")
        XCTAssertEqual(d.path, "/hook")
        XCTAssertEqual(d.headers["Substratal-Event-Type"], "user.suspended")
        XCTAssertEqual(d.headers["Substratal-Delivery-Attempt"], "1")
        XCTAssertEqual(d.headers["User-Agent"], "Substratal-Webhooks/1.0")
        let eventId = try XCTUnwrap(d.headers["Substratal-Event-Id"])
        XCTAssertTrue(eventId.hasPrefix("wev_"))
        XCTAssertTrue(d.headers["Substratal-Delivery-Id"]?.hasPrefix("dlv_") == true)
        let body = try JSONParser.parse(d.body)
        XCTAssertEqual(body["id"]?.string, eventId)
        XCTAssertEqual(body["type"]?.string, "user.suspended")
        XCTAssertEqual(body["data"]?["user_id"]?.string, "usr_ada")
        // t=<unix>,v1=<hex HMAC-SHA256(secret, "{t}.{raw body}")>, computed here independently.
        let sig = try XCTUnwrap(d.headers["Substratal-Signature"])
        let parts = sig.split(separator: ",")
        XCTAssertEqual(parts.count, 2)
        let t = try XCTUnwrap(Int(parts[0].dropFirst(2)))
        XCTAssertEqual(t, Int(clock.now().timeIntervalSince1970))
        XCTAssertEqual(String(parts[1]), "v1=" + referenceHMAC(key: Array(secret.utf8), message: Array("\(t).".utf8) + [UInt8](d.body)))
        // Not signed by another secret.
        XCTAssertNotEqual(String(parts[1]), "v1=" + referenceHMAC(key: Array("whsec_other".utf8), message: Array("\(t).".utf8) + [UInt8](d.body)))
        // No delivery for an event type it does not subscribe to.
        XCTAssertEqual(hub.call("POST", "/users/usr_ada/reactivate").status, 200)
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertEqual(receiver.requests.count, 1)
        let list = hub.call("GET", "/webhooks/\(w["id"]!.string!)/deliveries").json["data"]?.items ?? []
        XCTAssertEqual(list.count, 1)
        XCTAssertEqual(list.first?["status"]?.string, "succeeded")
        XCTAssertEqual(list.first?["response_status"]?.int, 200)
    }

    func testRotationSignsWithBothSecrets() throws {
        let hub = try makeHub()
        let receiver = try DeliveryRecorder()
        let w = create(hub, url: receiver.url)
        let id = w["id"]!.string!
        let old = w["signing_secret"]!.string!
        let new = hub.call("POST", "/webhooks/\(id)/rotate-secret").json["signing_secret"]!.string!
        hub.startWebhookDelivery()
        defer { hub.stopWebhookDelivery() }
        let test = hub.call("POST", "/webhooks/\(id)/test")
        XCTAssertEqual(test.status, 202)
        let d = try XCTUnwrap(receiver.wait(for: 1).first)
        XCTAssertEqual(d.headers["Substratal-Event-Type"], "webhook.test")
        XCTAssertEqual(d.headers["Substratal-Delivery-Id"], test.json["delivery_id"]?.string)
        let parts = d.headers["Substratal-Signature"]!.split(separator: ",").map(String.init)
        let t = parts[0].dropFirst(2)
        let message = Array("\(t).".utf8) + [UInt8](d.body)
        XCTAssertEqual(parts.dropFirst().map { $0 }, ["v1=" + referenceHMAC(key: Array(new.utf8), message: message),
                                                       "v1=" + referenceHMAC(key: Array(old.utf8), message: message)])
    }

    func testNon2xxIsRetriedWithBackoffAndRecorded() throws {
        let hub = try makeHub()
        let receiver = try DeliveryRecorder(statuses: [500, 503])
        let w = create(hub, url: receiver.url)
        hub.startWebhookDelivery()
        defer { hub.stopWebhookDelivery() }
        XCTAssertEqual(hub.call("POST", "/users/usr_ada/suspend", body: "{}").status, 200)
        let got = receiver.wait(for: 3)
        XCTAssertEqual(got.count, 3)
        XCTAssertEqual(got.map { $0.headers["Substratal-Delivery-Attempt"] }, ["1", "2", "3"])
        XCTAssertEqual(Set(got.map { $0.headers["Substratal-Event-Id"] }).count, 1)
        XCTAssertEqual(Set(got.map { $0.headers["Substratal-Delivery-Id"] }).count, 1)
        Thread.sleep(forTimeInterval: 0.1)
        let d = hub.call("GET", "/webhooks/\(w["id"]!.string!)/deliveries").json["data"]?.items.first
        XCTAssertEqual(d?["status"]?.string, "succeeded")
        XCTAssertEqual(d?["attempt"]?.int, 3)
    }

    func testConnectionFailureEndsFailedAfterBoundedAttempts() throws {
        let hub = try makeHub()
        // A port nothing listens on: bind one, then close it.
        let port = try { () throws -> UInt16 in
            let s = try HTTPServer(port: 0) { _ in HTTPResponseMessage(status: 200) }
            let p = s.port
            s.stop()
            return p
        }()
        let w = create(hub, url: "http://127.0.0.1:\(port)/hook")
        let id = w["id"]!.string!
        hub.startWebhookDelivery()
        defer { hub.stopWebhookDelivery() }
        let suspended = hub.call("POST", "/users/usr_ada/suspend", body: "{}")
        XCTAssertEqual(suspended.status, 200, suspended.text)
        // 0.2 + 0.4 + 0.8 + 1.6 + 3.2 s between the 6 attempts.
        let deadline = Date().addingTimeInterval(15)
        var d: JSON?
        while Date() < deadline {
            d = hub.call("GET", "/webhooks/\(id)/deliveries").json["data"]?.items.first
            if d?["status"]?.string == "failed" { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        XCTAssertEqual(d?["status"]?.string, "failed")
        XCTAssertEqual(d?["attempt"]?.int, 6)
        XCTAssertNotNil(d?["error"]?.string)
        XCTAssertEqual(hub.call("GET", "/webhooks/\(id)").json["consecutive_failures"]?.int, 1)
        // Redeliver: a new delivery of the same event.
        let receiver = try DeliveryRecorder()
        XCTAssertEqual(hub.call("PATCH", "/webhooks/\(id)", body: #"{"url":"\#(receiver.url)"}"#).status, 200)
        let redo = hub.call("POST", "/webhooks/\(id)/deliveries/\(d!["id"]!.string!)/redeliver")
        XCTAssertEqual(redo.status, 202)
        let got = try XCTUnwrap(receiver.wait(for: 1).first)
        XCTAssertEqual(got.headers["Substratal-Event-Id"], d?["event_id"]?.string)
        XCTAssertNotEqual(got.headers["Substratal-Delivery-Id"], d?["id"]?.string)
        XCTAssertEqual(hub.call("POST", "/webhooks/\(id)/deliveries/dlv_nope/redeliver").code, "delivery_not_found")
    }

    func testDuplicateFaultDeliversAnEventTwice() throws {
        let hub = try makeHub(faults: try FaultSpec(parsing: "dup=1"))
        let receiver = try DeliveryRecorder()
        _ = create(hub, url: receiver.url)
        hub.startWebhookDelivery()
        defer { hub.stopWebhookDelivery() }
        XCTAssertEqual(hub.call("POST", "/users/usr_ada/suspend", body: "{}").status, 200)
        let got = receiver.wait(for: 2)
        XCTAssertEqual(got.count, 2)
        XCTAssertEqual(Set(got.map { $0.headers["Substratal-Event-Id"] }).count, 1)
        XCTAssertEqual(Set(got.map { $0.headers["Substratal-Delivery-Id"] }).count, 2)
    }

    func testReorderFaultLetsLaterEventsOvertake() throws {
        let hub = try makeHub(faults: try FaultSpec(parsing: "reorder=0.5,seed=3"))
        let receiver = try DeliveryRecorder()
        _ = create(hub, url: receiver.url)
        var created: [String] = []
        for i in 0..<8 {
            XCTAssertEqual(hub.call("POST", "/users/usr_ada/\(i % 2 == 0 ? "suspend" : "reactivate")", body: "{}").status, 200)
        }
        try hub.engine.db.query("SELECT id FROM webhook_events ORDER BY seq") { created.append($0.text(0)) }
        hub.startWebhookDelivery()
        defer { hub.stopWebhookDelivery() }
        let got = receiver.wait(for: 8).compactMap { $0.headers["Substratal-Event-Id"] }
        XCTAssertEqual(Set(got), Set(created))
        XCTAssertNotEqual(got, created)
        XCTAssertThrowsError(try FaultSpec(parsing: "dup=2")) { error in
            XCTAssertEqual((error as? FaultSpecError)?.message, "bad fault spec: dup=2 must be a probability between 0 and 1")
        }
    }

    func testWebhooksPersistInTheStore() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("whk-\(UUID().uuidString).sqlite")
        defer { try? FileManager.default.removeItem(at: file) }
        let id: String
        do {
            let hub = try makeHub(storage: .file(file))
            id = create(hub, url: "http://127.0.0.1:9/x")["id"]!.string!
        }
        let again = try makeHub(storage: .file(file))
        XCTAssertEqual(again.call("GET", "/webhooks/\(id)").status, 200)
    }
}
