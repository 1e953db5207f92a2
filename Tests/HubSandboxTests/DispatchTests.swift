import Foundation
import HTTPKit
import XCTest
@testable import HubSandbox

/// The sandbox's Dispatch routes (docs/dispatch.md): 401, 400, 202, devices, idempotency.
final class DispatchTests: XCTestCase {
    let machine = "Bearer " + DispatchOptions.sandboxMachineToken
    let enroll = "Bearer " + DispatchOptions.sandboxEnrollmentToken

    func call(_ d: DispatchSandbox, _ method: String, _ path: String, auth: String?, body: String = "",
              key: String? = nil) -> HTTPResponseMessage {
        var h = HTTPHeaders()
        if let auth { h.add("Authorization", auth) }
        if let key { h.add("Idempotency-Key", key) }
        return d.handle(HTTPRequestMessage(method: method, target: path, headers: h, body: Data(body.utf8)))
    }
    func code(_ r: HTTPResponseMessage) -> String? { (try? JSONParser.parse(r.body))?["error"]?["code"]?.stringValue }

    func testHealth() {
        let r = call(DispatchSandbox(), "GET", "/health", auth: nil)
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(String(decoding: r.body, as: UTF8.self), #"{"status":"ok"}"#)
    }

    func testSendNeedsAKnownMachineToken() {
        let d = DispatchSandbox()
        XCTAssertEqual(call(d, "POST", "/v1/notifications", auth: nil, body: #"{"title":"a","body":"b"}"#).status, 401)
        XCTAssertEqual(call(d, "POST", "/v1/notifications", auth: "Bearer nope", body: #"{"title":"a","body":"b"}"#).status, 401)
        XCTAssertEqual(call(d, "POST", "/v1/notifications", auth: enroll, body: #"{"title":"a","body":"b"}"#).status, 401)
        XCTAssertEqual(d.sentNotifications, [])
    }

    func testValidation() {
        let d = DispatchSandbox()
        let long = String(repeating: "x", count: 101)
        XCTAssertEqual(code(call(d, "POST", "/v1/notifications", auth: machine, body: #"{"title":"","body":"b"}"#)), "invalid_title")
        XCTAssertEqual(code(call(d, "POST", "/v1/notifications", auth: machine, body: #"{"title":"\#(long)","body":"b"}"#)), "invalid_title")
        XCTAssertEqual(code(call(d, "POST", "/v1/notifications", auth: machine, body: #"{"title":"a"}"#)), "invalid_body")
        XCTAssertEqual(code(call(d, "POST", "/v1/notifications", auth: machine, body: #"{"title":"a","body":"\#(String(repeating: "y", count: 1001))"}"#)), "invalid_body")
        XCTAssertEqual(call(d, "POST", "/v1/notifications", auth: machine, body: "nope").status, 400)
        XCTAssertEqual(call(d, "POST", "/v1/notifications", auth: machine, body: #"{"title":"\#(String(repeating: "é", count: 100))","body":"b"}"#).status, 202)
    }

    func testAcceptedSendNamesTheMachineFromTheToken() throws {
        let d = DispatchSandbox()
        let r = call(d, "POST", "/v1/notifications", auth: machine, body: #"{"title":"Build complete","body":"main passed","machine":"spoof"}"#)
        XCTAssertEqual(r.status, 202)
        let json = try JSONParser.parse(r.body)
        XCTAssertEqual(json["acceptedDevices"], .int(1))
        XCTAssertEqual(d.sentNotifications.count, 1)
        XCTAssertEqual(d.sentNotifications[0].machine, "sandbox-ci")
        XCTAssertEqual(d.sentNotifications[0].id, json["id"]?.stringValue)
    }

    func testIdempotencyKeyReplays() throws {
        let d = DispatchSandbox()
        let body = #"{"title":"t","body":"b"}"#
        let a = call(d, "POST", "/v1/notifications", auth: machine, body: body, key: "k1")
        let b = call(d, "POST", "/v1/notifications", auth: machine, body: body, key: "k1")
        XCTAssertEqual(a.body, b.body)
        XCTAssertEqual(b.headers["Idempotent-Replayed"], "true")
        XCTAssertEqual(d.sentNotifications.count, 1)
        XCTAssertEqual(call(d, "POST", "/v1/notifications", auth: machine, body: #"{"title":"t","body":"other"}"#, key: "k1").status, 409)
    }

    func testDevices() throws {
        let d = DispatchSandbox(options: DispatchOptions(initialDevices: []))
        let token = String(repeating: "0f", count: 32)
        let body = #"{"deviceToken":"\#(token)","environment":"production"}"#
        XCTAssertEqual(call(d, "POST", "/v1/devices", auth: machine, body: body).status, 401)
        XCTAssertEqual(call(d, "POST", "/v1/devices", auth: enroll, body: body).status, 201)
        XCTAssertEqual(call(d, "POST", "/v1/devices", auth: enroll, body: body).status, 200)
        XCTAssertEqual(code(call(d, "POST", "/v1/devices", auth: enroll, body: #"{"deviceToken":"\#(token)","environment":"sandbox"}"#)), "invalid_environment")
        XCTAssertEqual(code(call(d, "POST", "/v1/devices", auth: enroll, body: #"{"deviceToken":"xyz","environment":"production"}"#)), "invalid_device_token")
        let sent = call(d, "POST", "/v1/notifications", auth: machine, body: #"{"title":"t","body":"b"}"#)
        XCTAssertEqual(try JSONParser.parse(sent.body)["acceptedDevices"], .int(1))
        XCTAssertEqual(call(d, "DELETE", "/v1/devices/\(token)", auth: enroll).status, 204)
        XCTAssertEqual(d.devices.first?.active, false)
        let none = call(d, "POST", "/v1/notifications", auth: machine, body: #"{"title":"t","body":"b"}"#)
        XCTAssertEqual(try JSONParser.parse(none.body)["acceptedDevices"], .int(0))
        XCTAssertEqual(call(d, "GET", "/v1/nope", auth: machine).status, 404)
    }
}
