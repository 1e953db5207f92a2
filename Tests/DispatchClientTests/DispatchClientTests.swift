import DispatchClient
import Foundation
import HTTPKit
import HubSandbox
import XCTest

/// The Dispatch client against the Dispatch contract (docs/dispatch.md), mostly against the in-process `DispatchSandbox`
/// (the server's rules), with scripted transports for failures.
final class DispatchClientTests: XCTestCase {
    static let base = URL(string: "http://127.0.0.1:8471")!
    static let token = DispatchOptions.sandboxMachineToken

    /// Records every request and the waits between attempts.
    final class Recorder: @unchecked Sendable {
        private let lock = NSLock()
        private var _requests: [HTTPRequestMessage] = []
        private var _sleeps: [TimeInterval] = []
        var requests: [HTTPRequestMessage] { lock.withLock { _requests } }
        var sleeps: [TimeInterval] { lock.withLock { _sleeps } }
        var keys: [String] { requests.compactMap { $0.headers["Idempotency-Key"] } }
        func record(_ r: HTTPRequestMessage) -> Int { lock.withLock { _requests.append(r); return _requests.count } }
        func slept(_ t: TimeInterval) { lock.withLock { _sleeps.append(t) } }
    }

    /// A client whose transport runs `respond(attempt, request)`; `nil` from it means "ask the sandbox".
    func client(_ sandbox: DispatchSandbox = DispatchSandbox(), token: String = DispatchClientTests.token, recorder: Recorder = Recorder(),
                retry: DispatchRetryPolicy = DispatchRetryPolicy(),
                respond: @escaping @Sendable (Int, HTTPRequestMessage) throws -> HTTPResponseMessage? = { _, _ in nil }) throws -> DispatchClient {
        try DispatchClient(baseURL: Self.base, token: token, tokenSource: "the test token",
                           transport: DispatchTransports.function { request, _ in
                               let n = recorder.record(request)
                               return try respond(n, request) ?? sandbox.handle(request)
                           }, retry: retry, sleep: { recorder.slept($0) })
    }

    func note(_ title: String = "Build complete", _ body: String = "main passed") throws -> DispatchNotification {
        try DispatchNotification(title: title, body: body)
    }

    func assertDispatchError(_ code: String, field: String? = nil, status: Int? = nil, file: StaticString = #filePath, line: UInt = #line,
                             _ body: () throws -> Void) {
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            guard let e = error as? DispatchError else { return XCTFail("not a DispatchError: \(error)", file: file, line: line) }
            XCTAssertEqual(e.code, code, "\(e)", file: file, line: line)
            XCTAssertEqual(e.field, field, "\(e)", file: file, line: line)
            if let status { XCTAssertEqual(e.status, status, "\(e)", file: file, line: line) }
            XCTAssertFalse(e.description.contains(Self.token), "the token leaked: \(e)", file: file, line: line)
        }
    }

    /// The server's answer to `title`/`body` sent without the client's checks.
    func serverStatus(title: String, body: String) -> Int {
        let json = try! JSONSerialization.data(withJSONObject: ["title": title, "body": body], options: [.sortedKeys])
        return DispatchSandbox().handle(HTTPRequestMessage(method: "POST", target: "/v1/notifications",
                                                           headers: ["Authorization": "Bearer \(Self.token)"], body: json)).status
    }

    /// The client accepts exactly what the server accepts.
    func assertAgreesWithServer(title: String, body: String, accepted: Bool, file: StaticString = #filePath, line: UInt = #line) {
        let clientAccepts = (try? DispatchNotification(title: title, body: body)) != nil
        XCTAssertEqual(clientAccepts, accepted, "client, title \(title.count) / body \(body.count) characters", file: file, line: line)
        XCTAssertEqual(serverStatus(title: title, body: body), accepted ? 202 : 400, "server", file: file, line: line)
    }

    // MARK: Validation

    func testTitleBoundaries() throws {
        assertDispatchError("invalid_title", field: "title") { _ = try DispatchNotification(title: "", body: "b") }
        XCTAssertNoThrow(try DispatchNotification(title: "t", body: "b"))
        XCTAssertNoThrow(try DispatchNotification(title: String(repeating: "t", count: 100), body: "b"))
        assertDispatchError("invalid_title", field: "title") { _ = try DispatchNotification(title: String(repeating: "t", count: 101), body: "b") }
        for n in [0, 1, 100, 101] {
            assertAgreesWithServer(title: String(repeating: "t", count: n), body: "b", accepted: (1...100).contains(n))
        }
        XCTAssertThrowsError(try DispatchNotification(title: String(repeating: "t", count: 101), body: "b")) { error in
            XCTAssertEqual("\(error)", "invalid_title: title must be 1–100 characters (got 101). Shorten it.")
        }
    }

    func testBodyBoundaries() throws {
        assertDispatchError("invalid_body", field: "body") { _ = try DispatchNotification(title: "t", body: "") }
        XCTAssertNoThrow(try DispatchNotification(title: "t", body: String(repeating: "b", count: 1000)))
        assertDispatchError("invalid_body", field: "body") { _ = try DispatchNotification(title: "t", body: String(repeating: "b", count: 1001)) }
        for n in [0, 1, 1000, 1001] {
            assertAgreesWithServer(title: "t", body: String(repeating: "b", count: n), accepted: (1...1000).contains(n))
        }
    }

    /// Characters, not bytes or code points: what the server's `String.count` counts.
    func testMultiByteCharactersCountAsTheServerCountsThem() throws {
        let precomposed = "\u{E9}"          // é, 2 bytes
        let decomposed = "e\u{301}"         // é, 2 scalars, 3 bytes, 1 character
        let flag = "\u{1F1EB}\u{1F1F7}"     // 🇫🇷, 2 scalars, 8 bytes, 1 character
        let family = "👩‍👩‍👧"                   // 5 scalars joined, 1 character
        for unit in [precomposed, decomposed, flag, family, "日"] {
            assertAgreesWithServer(title: String(repeating: unit, count: 100), body: "b", accepted: true)
            assertAgreesWithServer(title: String(repeating: unit, count: 101), body: "b", accepted: false)
            assertAgreesWithServer(title: "t", body: String(repeating: unit, count: 1000), accepted: true)
            assertAgreesWithServer(title: "t", body: String(repeating: unit, count: 1001), accepted: false)
        }
        XCTAssertEqual(String(repeating: flag, count: 100).utf8.count, 800)
    }

    func testTheBodyIsStableJSON() throws {
        XCTAssertEqual(String(decoding: try note("a \"q\"", "line\nnext").json, as: UTF8.self), #"{"body":"line\nnext","title":"a \"q\""}"#)
    }

    // MARK: Sending

    func testAcceptedSendReturnsTheIdAndDevicesAndSendsTheHeaders() throws {
        let sandbox = DispatchSandbox()
        let recorder = Recorder()
        let receipt = try client(sandbox, recorder: recorder).send(note(), idempotencyKey: "k-1")
        XCTAssertEqual(receipt, DispatchReceipt(id: sandbox.sentNotifications[0].id, acceptedDevices: 1, replayed: false))
        let request = try XCTUnwrap(recorder.requests.first)
        XCTAssertEqual(request.method, "POST")
        XCTAssertEqual(request.target, "/v1/notifications")
        XCTAssertEqual(request.headers["Authorization"], "Bearer \(Self.token)")
        XCTAssertEqual(request.headers["Idempotency-Key"], "k-1")
        XCTAssertEqual(request.headers["Content-Type"], "application/json")
        XCTAssertEqual(sandbox.sentNotifications.map(\.title), ["Build complete"])
        XCTAssertEqual(sandbox.sentNotifications.map(\.idempotencyKey), ["k-1"])
    }

    func testTheSameKeyIsReplayedAndSaysSo() throws {
        let sandbox = DispatchSandbox()
        let c = try client(sandbox)
        let first = try c.send(note(), idempotencyKey: "k-1")
        let second = try c.send(note(), idempotencyKey: "k-1")
        XCTAssertFalse(first.replayed)
        XCTAssertTrue(second.replayed)
        XCTAssertEqual(first.id, second.id)
        XCTAssertEqual(sandbox.sentNotifications.count, 1)
        assertDispatchError("idempotency_key_reused", status: 409) { _ = try c.send(note("Other"), idempotencyKey: "k-1") }
        XCTAssertEqual(sandbox.sentNotifications.count, 1)
    }

    func testARefusedTokenIsAClearErrorWithoutTheToken() throws {
        let secret = "dsp_live_0123456789abcdef0123456789abcdef"
        let c = try client(token: secret)
        XCTAssertThrowsError(try c.send(note(), idempotencyKey: "k")) { error in
            let e = error as! DispatchError
            XCTAssertEqual(e.code, "unauthorized")
            XCTAssertEqual(e.status, 401)
            XCTAssertTrue(e.message.hasPrefix("the Dispatch token was refused: http://127.0.0.1:8471 does not accept the machine token from the test token"), e.message)
            XCTAssertFalse("\(e)".contains(secret))
            XCTAssertTrue(e.isDefinite)
        }
    }

    func testServerValidationErrorsNameTheField() throws {
        func refusing(_ code: String) throws -> DispatchClient {
            try client { _, _ in
                HTTPResponseMessage(status: 400, headers: ["Content-Type": "application/json"],
                                    body: Data(#"{"error":{"code":"\#(code)","message":"\#(code) says no."}}"#.utf8))
            }
        }
        assertDispatchError("invalid_title", field: "title", status: 400) { _ = try refusing("invalid_title").send(note(), idempotencyKey: "k") }
        assertDispatchError("invalid_body", field: "body", status: 400) { _ = try refusing("invalid_body").send(note(), idempotencyKey: "k") }
        assertDispatchError("invalid_json", status: 400) { _ = try refusing("invalid_json").send(note(), idempotencyKey: "k") }
        XCTAssertThrowsError(try refusing("invalid_body").send(note(), idempotencyKey: "k")) { error in
            XCTAssertEqual((error as? DispatchError)?.message, "Dispatch refused the notification: invalid_body says no.")
            XCTAssertEqual((error as? DispatchError)?.isDefinite, true)
        }
    }

    // MARK: Retries

    func testATransportFailureIsRetriedWithTheSameKey() throws {
        let sandbox = DispatchSandbox()
        let recorder = Recorder()
        let c = try client(sandbox, recorder: recorder) { n, _ in
            if n == 1 { throw HTTPClientError(.cannotConnect, "connection refused") }
            return nil
        }
        let receipt = try c.send(note(), idempotencyKey: "k-retry")
        XCTAssertFalse(receipt.replayed)
        XCTAssertEqual(recorder.keys, ["k-retry", "k-retry"])
        XCTAssertEqual(recorder.sleeps.count, 1)
        XCTAssertEqual(sandbox.sentNotifications.count, 1)
    }

    /// The response to an accepted send is lost: the retry carries the same key and the
    /// server replays it, so the phone is notified once.
    func testALostResponseIsRetriedAndReplayedNotSentTwice() throws {
        let sandbox = DispatchSandbox()
        let recorder = Recorder()
        let c = try DispatchClient(baseURL: Self.base, token: Self.token, transport: DispatchTransports.inProcess { request in
            var response = sandbox.handle(request)
            response.dropped = recorder.record(request) == 1
            return response
        }, sleep: { recorder.slept($0) })
        let receipt = try c.send(note(), idempotencyKey: "k-lost")
        XCTAssertTrue(receipt.replayed)
        XCTAssertEqual(recorder.keys, ["k-lost", "k-lost"])
        XCTAssertEqual(sandbox.sentNotifications.count, 1)
        XCTAssertEqual(receipt.id, sandbox.sentNotifications[0].id)
    }

    func testServerErrorsAreRetriedWithTheSameKeyHonouringRetryAfter() throws {
        let sandbox = DispatchSandbox()
        let recorder = Recorder()
        let c = try client(sandbox, recorder: recorder) { n, _ in
            n <= 2 ? HTTPResponseMessage(status: 503, headers: ["Retry-After": "2"],
                                         body: Data(#"{"error":{"code":"service_unavailable","message":"down"}}"#.utf8)) : nil
        }
        _ = try c.send(note(), idempotencyKey: "k-5xx")
        XCTAssertEqual(recorder.keys, ["k-5xx", "k-5xx", "k-5xx"])
        XCTAssertEqual(recorder.sleeps, [2, 2])
        XCTAssertEqual(sandbox.sentNotifications.count, 1)
    }

    func testAttemptsAreBounded() throws {
        let recorder = Recorder()
        let c = try client(recorder: recorder, retry: DispatchRetryPolicy(maxAttempts: 3)) { _, _ in
            HTTPResponseMessage(status: 500, body: Data(#"{"error":{"code":"internal_error","message":"boom"}}"#.utf8))
        }
        assertDispatchError("internal_error", status: 500) { _ = try c.send(note(), idempotencyKey: "k") }
        XCTAssertEqual(recorder.requests.count, 3)
        XCTAssertEqual(recorder.sleeps.count, 2)

        let lost = Recorder()
        let silent = try client(recorder: lost, retry: DispatchRetryPolicy(maxAttempts: 4)) { _, _ in
            throw HTTPClientError(.connectionLost, "connection reset")
        }
        XCTAssertThrowsError(try silent.send(note(), idempotencyKey: "k")) { error in
            XCTAssertEqual((error as? DispatchError)?.code, "transport_error")
            XCTAssertEqual((error as? DispatchError)?.message, "no answer from Dispatch at http://127.0.0.1:8471 after 4 attempts: connection reset")
            XCTAssertEqual((error as? DispatchError)?.isDefinite, false)
        }
        XCTAssertEqual(lost.keys, ["k", "k", "k", "k"])
    }

    func testPermanentTransportErrorsAndClientErrorsAreNotRetried() throws {
        let recorder = Recorder()
        let c = try client(recorder: recorder) { _, _ in throw HTTPClientError(.tooLarge, "response too large") }
        assertDispatchError("transport_error") { _ = try c.send(note(), idempotencyKey: "k") }
        XCTAssertEqual(recorder.requests.count, 1)
        let refused = Recorder()
        assertDispatchError("unauthorized", status: 401) { _ = try client(token: "wrong", recorder: refused).send(note(), idempotencyKey: "k") }
        XCTAssertEqual(refused.requests.count, 1)
    }

    // MARK: Configuration and health

    func testOnlyHTTPSOrLoopbackHTTP() throws {
        let t = DispatchTransports.function { _, _ in HTTPResponseMessage(status: 200) }
        for ok in ["https://dispatch.example.com", "http://127.0.0.1:8471", "http://localhost:1", "http://[::1]:8471"] {
            XCTAssertNoThrow(try DispatchClient(baseURL: URL(string: ok)!, token: "t", transport: t), ok)
        }
        for bad in ["http://dispatch.example.com", "ftp://127.0.0.1", "http://10.0.0.1:8080"] {
            assertDispatchError("insecure_transport") { _ = try DispatchClient(baseURL: URL(string: bad)!, token: "t", transport: t) }
        }
        assertDispatchError("configuration_error") { _ = try DispatchClient(baseURL: Self.base, token: "", transport: t) }
        assertDispatchError("configuration_error") { _ = try DispatchClient(baseURL: Self.base, token: "a b", transport: t) }
        assertDispatchError("configuration_error") { _ = try self.client().send(self.note(), idempotencyKey: "") }
    }

    func testHealth() throws {
        let recorder = Recorder()
        try client(recorder: recorder).health()
        XCTAssertEqual(recorder.requests.map(\.target), ["/health"])
        XCTAssertNil(recorder.requests[0].headers["Authorization"], "the token is not sent to /health")
        assertDispatchError("not_found", status: 404) {
            try self.client { _, _ in HTTPResponseMessage(status: 404) }.health()
        }
    }

    /// A server that answers with something that is not HTTP, echoing the request: the
    /// transport error quotes its first bytes, which may cut the token short. Neither the
    /// whole token nor any run of twelve or more of its characters reaches the error. A piece
    /// in a server's own error message is left as it is: a server may repeat a recipe's
    /// text, and masking pieces there would tell the recipe which of its guesses are
    /// pieces of the token (a known prefix, then one character at a time).
    func testAnErrorQuotingTheServerShowsNoPieceOfTheToken() throws {
        let token = "dsp_live_Pieces0123456789abcdef"
        for cut in [200, 40, 32] {   // the whole token, then its first 20 and 12 characters
            let c = try client(token: token, retry: DispatchRetryPolicy(maxAttempts: 1)) { _, request in
                let echoed = "XTTP/1.1 200 " + (request.headers["Authorization"] ?? "")
                throw HTTPClientError(.invalidResponse, "not an HTTP/1.1 status line: " + String(echoed.prefix(cut)))
            }
            XCTAssertThrowsError(try c.send(note(), idempotencyKey: "k-\(cut)")) { error in
                let e = error as! DispatchError
                XCTAssertEqual(e.message, "no answer from Dispatch at http://127.0.0.1:8471 after 1 attempt: not an HTTP/1.1 status line: XTTP/1.1 200 Bearer <secret dispatch token>", "\(cut)")
            }
        }
        let repeating = try client(token: token) { _, request in
            let title = (try? JSONSerialization.jsonObject(with: request.body) as? [String: String])?["title"] ?? ""
            return HTTPResponseMessage(status: 400, headers: ["Content-Type": "application/json"],
                                       body: Data(#"{"error":{"code":"invalid_title","message":"no title like \#(title)"}}"#.utf8))
        }
        XCTAssertThrowsError(try repeating.send(note("dsp_live_P"), idempotencyKey: "k-guess")) { error in
            XCTAssertEqual((error as! DispatchError).message, "Dispatch refused the notification: no title like dsp_live_P")
        }
    }
}
