import Foundation
import XCTest
@testable import HTTPKit
#if canImport(Glibc)
import Glibc
#endif

/// Clients that send slowly, hold many connections, or come from one address must not
/// keep others from being served: each request has a deadline for its head and for its
/// body, each address a connection cap, and a full server makes room for a client from
/// a less busy address.
final class HTTPServerSlowClientTests: XCTestCase {
    // MARK: - Deadlines

    func testHeadSentOneByteAtATimeGets408AtTheHeaderDeadline() throws {
        let server = try startServer(self, limits: .init(idleTimeout: 30, headerTimeout: 0.5), handler: echoHandler())
        let client = try RawClient(port: server.port, timeout: 8)
        client.send("GET / HTTP/1.1\r\n")
        let trickle = Trickle(client, byte: "X", every: 0.05)
        defer { trickle.stop() }
        let rest = client.readToEnd()
        XCTAssertEqual(rest.text, refusal("408 Request Timeout", "request_timeout", "the request was not received in time"))
        XCTAssertTrue(rest.closed)
    }

    func testSilentNewConnectionIsClosedAtTheHeaderDeadlineWithoutAnAnswer() throws {
        let server = try startServer(self, limits: .init(idleTimeout: 30, headerTimeout: 0.3), handler: echoHandler())
        let client = try RawClient(port: server.port, timeout: 8)
        let rest = client.readToEnd()
        XCTAssertEqual(rest.text, "")
        XCTAssertTrue(rest.closed)
    }

    func testKeptAliveConnectionGetsTheHeaderDeadlineFromItsNextRequestsFirstByte() throws {
        let server = try startServer(self, limits: .init(idleTimeout: 30, headerTimeout: 0.5), handler: echoHandler())
        let client = try RawClient(port: server.port, timeout: 8)
        client.send("GET /1 HTTP/1.1\r\n\r\n")
        XCTAssertEqual(client.readResponse(), echoResponse("GET", "/1"))
        // Idle longer than the head's deadline: a kept-alive connection may wait for its
        // next request up to the idle timeout.
        Thread.sleep(forTimeInterval: 0.8)
        client.send("GET /2 HTTP/1.1\r\n\r\n")
        XCTAssertEqual(client.readResponse(), echoResponse("GET", "/2"))
        client.send("GET /3 HTTP/1.1\r\n")
        let trickle = Trickle(client, byte: "X", every: 0.05)
        defer { trickle.stop() }
        XCTAssertEqual(client.readToEnd().text, refusal("408 Request Timeout", "request_timeout", "the request was not received in time"))
    }

    func testBodySentBelowTheMinimumRateGets408WithoutReachingTheHandler() throws {
        let recorder = RequestRecorder()
        let limits = HTTPServerLimits(idleTimeout: 30, headerTimeout: 10, bodyTimeout: 0.5, minBodyBytesPerSecond: 1000)
        let server = try startServer(self, limits: limits, handler: echoHandler(recorder))
        let client = try RawClient(port: server.port, timeout: 8)
        client.send("POST /hooks HTTP/1.1\r\nContent-Length: 1000\r\n\r\n")
        let trickle = Trickle(client, byte: "x", every: 0.05)
        defer { trickle.stop() }
        let rest = client.readToEnd()
        XCTAssertEqual(rest.text, refusal("408 Request Timeout", "request_timeout", "the request was not received in time"))
        XCTAssertTrue(recorder.requests.isEmpty)
    }

    func testSlowBodyAboveTheMinimumRateKeepsItsDeadlineMovingAndIsServed() throws {
        // 400 bytes at about 200 bytes a second take two seconds, twice the body
        // timeout; at a minimum of 100 bytes a second each 20-byte piece buys 0.2 s more
        // (so a pause of up to a second anywhere is still in time).
        let limits = HTTPServerLimits(idleTimeout: 30, headerTimeout: 10, bodyTimeout: 1, minBodyBytesPerSecond: 100)
        let server = try startServer(self, limits: limits, handler: echoHandler())
        let client = try RawClient(port: server.port, timeout: 8)
        let body = String(repeating: "abcdefghijklmnopqrst", count: 20)
        client.send("POST /slow HTTP/1.1\r\nContent-Length: \(body.utf8.count)\r\n\r\n")
        for piece in stride(from: 0, to: body.utf8.count, by: 20) {
            client.send(Array(Array(body.utf8)[piece..<piece + 20]))
            Thread.sleep(forTimeInterval: 0.1)
        }
        XCTAssertEqual(client.readResponse(), echoResponse("POST", "/slow", body: body))
    }

    // MARK: - Connection caps

    func testConnectionsBeyondThePerAddressCapGet429WhileOtherAddressesAreServed() throws {
        let server = try startServer(self, limits: .init(maxConnections: 16, maxConnectionsPerAddress: 2), handler: echoHandler())
        let held = try (0..<2).map { _ in try RawClient(port: server.port, from: "127.0.0.2") }
        for client in held { client.send("GET / HTTP/1.1\r\n") }
        try waitUntil { server.openConnectionCount == 2 }
        let third = try RawClient(port: server.port, from: "127.0.0.2")
        XCTAssertEqual(third.readToEnd().text, refusal(
            "429 Too Many Requests", "too_many_connections",
            "this address already holds 2 open connections, the most one address may hold: finish or close one, then retry",
            retryAfter: true))
        let other = try RawClient(port: server.port, from: "127.0.0.3")
        other.send("GET /other HTTP/1.1\r\n\r\n")
        XCTAssertEqual(other.readResponse(), echoResponse("GET", "/other"))
        // A finished request gives its slot back.
        held[0].send("\r\n")
        XCTAssertEqual(held[0].readResponse(), echoResponse("GET", "/"))
        held[0].send("GET /bye HTTP/1.1\r\nConnection: close\r\n\r\n")
        XCTAssertEqual(held[0].readResponse(), echoResponse("GET", "/bye", close: true))
        try waitUntil { server.openConnectionCount == 2 }
        let again = try RawClient(port: server.port, from: "127.0.0.2")
        again.send("GET /again HTTP/1.1\r\n\r\n")
        XCTAssertEqual(again.readResponse(), echoResponse("GET", "/again"))
    }

    func testFullServerEvictsTheLongestWaitingConnectionOfABusierAddressForANewClient() throws {
        let limits = HTTPServerLimits(maxConnections: 3, maxConnectionsPerAddress: 0, evictionAge: 0)
        let server = try startServer(self, limits: limits, handler: echoHandler())
        var waiting: [RawClient] = []
        for n in 1...3 {
            let client = try RawClient(port: server.port, from: "127.0.0.2")
            client.send("GET /\(n) HTTP/1.1\r\n")
            waiting.append(client)
            try waitUntil { server.openConnectionCount == n }
        }
        let newcomer = try RawClient(port: server.port, from: "127.0.0.3")
        newcomer.send("GET /new HTTP/1.1\r\n\r\n")
        XCTAssertEqual(newcomer.readResponse(), echoResponse("GET", "/new"))
        // The first connection (the one waiting longest) made room, with a 503.
        XCTAssertEqual(waiting[0].readToEnd().text, refusal(
            "503 Service Unavailable", "server_busy",
            "the server is full and this connection had waited longest for its request: retry", retryAfter: true))
        // A client from the busiest address finds no busier one to make room: 503.
        let sameAddress = try RawClient(port: server.port, from: "127.0.0.2")
        XCTAssertEqual(sameAddress.readToEnd().text, refusal(
            "503 Service Unavailable", "server_busy", "too many open connections: retry later", retryAfter: true))
        // The others were not touched.
        for (index, client) in waiting.dropFirst().enumerated() {
            client.send("\r\n")
            XCTAssertEqual(client.readResponse(), echoResponse("GET", "/\(index + 2)"))
        }
    }

    func testKeptAliveConnectionIdleLongestMakesRoomWithoutAnAnswer() throws {
        let limits = HTTPServerLimits(maxConnections: 2, maxConnectionsPerAddress: 0, evictionAge: 0)
        let server = try startServer(self, limits: limits, handler: echoHandler())
        let idle = try RawClient(port: server.port, from: "127.0.0.2")
        idle.send("GET /done HTTP/1.1\r\n\r\n")
        XCTAssertEqual(idle.readResponse(), echoResponse("GET", "/done"))
        try waitUntil { server.idleConnectionCount == 1 }   // its thread is back waiting
        let partial = try RawClient(port: server.port, from: "127.0.0.2")
        partial.send("GET /partial HTTP/1.1\r\n")
        try waitUntil { server.openConnectionCount == 2 }
        let newcomer = try RawClient(port: server.port, from: "127.0.0.3")
        newcomer.send("GET /new HTTP/1.1\r\n\r\n")
        XCTAssertEqual(newcomer.readResponse(), echoResponse("GET", "/new"))
        let idleRest = idle.readToEnd()
        XCTAssertEqual(idleRest.text, "")
        XCTAssertTrue(idleRest.closed)
        partial.send("\r\n")
        XCTAssertEqual(partial.readResponse(), echoResponse("GET", "/partial"))
    }

    func testFullServerAnswers503WhenNoConnectionHasWaitedLongEnoughToMakeRoom() throws {
        let limits = HTTPServerLimits(maxConnections: 2, maxConnectionsPerAddress: 0, evictionAge: 60)
        let server = try startServer(self, limits: limits, handler: echoHandler())
        let first = try RawClient(port: server.port, from: "127.0.0.2")
        let second = try RawClient(port: server.port, from: "127.0.0.2")
        first.send("GET /1 HTTP/1.1\r\n")
        second.send("GET /2 HTTP/1.1\r\n")
        try waitUntil { server.openConnectionCount == 2 }
        let newcomer = try RawClient(port: server.port, from: "127.0.0.3")
        XCTAssertEqual(newcomer.readToEnd().text, refusal(
            "503 Service Unavailable", "server_busy", "too many open connections: retry later", retryAfter: true))
        first.send("\r\n")
        XCTAssertEqual(first.readResponse(), echoResponse("GET", "/1"))
        second.send("\r\n")
        XCTAssertEqual(second.readResponse(), echoResponse("GET", "/2"))
    }

    func testConnectionWhoseHandlerRunsIsNeverEvicted() throws {
        let release = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let limits = HTTPServerLimits(maxConnections: 1, maxConnectionsPerAddress: 0, evictionAge: 0)
        let server = try startServer(self, limits: limits) { _ in
            started.signal()
            release.wait()
            return HTTPResponseMessage(status: 200, body: Data("done".utf8))
        }
        let busy = try RawClient(port: server.port, from: "127.0.0.2")
        busy.send("GET /slow-handler HTTP/1.1\r\n\r\n")
        XCTAssertEqual(started.wait(timeout: .now() + 5), .success)
        let newcomer = try RawClient(port: server.port, from: "127.0.0.3")
        XCTAssertEqual(newcomer.readToEnd().text, refusal(
            "503 Service Unavailable", "server_busy", "too many open connections: retry later", retryAfter: true))
        release.signal()
        XCTAssertEqual(busy.readResponse(), "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\ndone")
    }

    func testNormalClientIsServedWhileTricklingClientsFromSeveralAddressesHoldEverySlot() throws {
        let limits = HTTPServerLimits(maxConnections: 24, maxConnectionsPerAddress: 6, evictionAge: 0.2)
        let server = try startServer(self, limits: limits, handler: echoHandler())
        var tricklers: [(RawClient, Trickle)] = []
        defer { for (_, trickle) in tricklers { trickle.stop() } }
        for n in 0..<60 {
            let client = try RawClient(port: server.port, from: "127.0.0.\(2 + n % 8)")
            client.send("POST /hooks HTTP/1.1\r\nContent-Length: 100000\r\n\r\n")
            tricklers.append((client, Trickle(client, byte: "x", every: 0.2)))
        }
        try waitUntil { server.openConnectionCount == 24 }
        Thread.sleep(forTimeInterval: 0.3)
        for attempt in 1...3 {
            let client = try RawClient(port: server.port, from: "127.0.0.1")
            client.send("GET /real-\(attempt) HTTP/1.1\r\n\r\n")
            XCTAssertEqual(client.readResponse(), echoResponse("GET", "/real-\(attempt)"))
        }
    }

    // MARK: - Out of descriptors

    func testOutOfDescriptorsTheServerAnswers503AndGoesOnServing() throws {
        let server = try startServer(self, handler: echoHandler())
        // Sockets made before the limit is lowered; they connect once it is.
        let clients = (0..<3).map { _ in socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0) }
        defer { for fd in clients { close(fd) } }
        var fillers: [Int32] = []
        var original = rlimit()
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        XCTAssertEqual(getrlimit(resource, &original), 0)
        var lowered = original
        lowered.rlim_cur = rlim_t(highestOpenDescriptor() + 1)
        XCTAssertEqual(setrlimit(resource, &lowered), 0)
        // Every descriptor number below the limit in use: accept(2) fails with EMFILE.
        while case let fd = open("/dev/null", O_RDONLY), fd >= 0 { fillers.append(fd) }
        for fd in clients {
            XCTAssertEqual(connectLoopback(fd, port: server.port), 0)
            XCTAssertEqual(readAll(fd), refusal(
                "503 Service Unavailable", "server_busy", "too many open connections: retry later", retryAfter: true))
        }
        for fd in fillers { close(fd) }
        XCTAssertEqual(setrlimit(resource, &original), 0)
        let client = try RawClient(port: server.port)
        client.send("GET /after HTTP/1.1\r\n\r\n")
        XCTAssertEqual(client.readResponse(), echoResponse("GET", "/after"))
    }

    func testMaxConnectionsFitsUnderTheOpenFileLimit() throws {
        let soft = try XCTUnwrap(Socket.descriptorLimits()?.soft)
        XCTAssertEqual(HTTPServer.connectionsFitting(soft + 1000), soft - 64)
        XCTAssertEqual(HTTPServer.connectionsFitting(10), 10)
    }
}

// MARK: - Helpers

/// The exact bytes of a refusal the server sends before closing.
private func refusal(_ statusLine: String, _ code: String, _ message: String, retryAfter: Bool = false) -> String {
    let body = #"{"error":{"code":"\#(code)","message":"\#(message)"}}"#
    return "HTTP/1.1 \(statusLine)\r\nContent-Type: application/json\r\n" + (retryAfter ? "Retry-After: 1\r\n" : "")
        + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body
}

/// Sends one byte every `every` seconds on a thread of its own until stopped or the
/// connection fails (bounded: at most 30 s).
private final class Trickle: @unchecked Sendable {
    private let stopped = NSCondition()
    private var isStopped = false

    init(_ client: RawClient, byte: Character, every interval: Double) {
        let fd = client.fd
        let value = [UInt8(byte.asciiValue!)]
        Thread.detachNewThread { [self] in
            let end = Date(timeIntervalSinceNow: 30)
            stopped.lock()
            defer { stopped.unlock() }
            while !isStopped, Date() < end {
                let sent = value.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, 1, Int32(MSG_NOSIGNAL)) }
                if sent <= 0 { return }
                _ = stopped.wait(until: Date(timeIntervalSinceNow: interval))
            }
        }
    }

    func stop() {
        stopped.lock()
        isStopped = true
        stopped.broadcast()
        stopped.unlock()
    }
}

/// Polls `condition` every 10 ms for up to 5 s; fails if it never holds.
private func waitUntil(_ condition: () -> Bool, file: StaticString = #filePath, line: UInt = #line) throws {
    let end = Date(timeIntervalSinceNow: 5)
    while !condition() {
        guard Date() < end else {
            XCTFail("the condition did not hold within 5 s", file: file, line: line)
            return
        }
        Thread.sleep(forTimeInterval: 0.01)
    }
}

extension HTTPServer {
    /// Connections waiting for their next request on a kept-alive connection.
    var idleConnectionCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return connections.values.filter { $0.state == .idle }.count
    }
}

/// The highest descriptor number this process has open (below 65,536).
private func highestOpenDescriptor() -> Int32 {
    var highest: Int32 = 2
    for fd in 0..<Int32(65_536) where fcntl(fd, F_GETFD) != -1 { highest = fd }
    return highest
}

private func connectLoopback(_ fd: Int32, port: UInt16) -> Int32 {
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_port = port.bigEndian
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    var tv = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    return withUnsafePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
}

/// Everything `fd` receives until the peer closes or 5 s of silence.
private func readAll(_ fd: Int32) -> String {
    var out: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while case let n = buffer.withUnsafeMutableBytes({ recv(fd, $0.baseAddress, $0.count, 0) }), n > 0 {
        out += buffer[0..<n]
    }
    return String(decoding: out, as: UTF8.self)
}
