import XCTest
@testable import HTTPKit

/// Binding, concurrency, throughput and shutdown.
final class HTTPServerLifecycleTests: XCTestCase {
    func testNonLoopbackHostsAreRejected() {
        for host in ["0.0.0.0", "192.168.1.10", "example.com", "::", "", "localhost.example"] {
            XCTAssertThrowsError(try HTTPServer(host: host) { _ in HTTPResponseMessage(status: 200) }, host) { error in
                XCTAssertEqual(
                    error as? HTTPServerError,
                    HTTPServerError(
                        code: .nonLoopbackHost,
                        message: "refusing to listen on \"\(host)\": the HTTP server binds only to loopback; "
                            + "use 127.0.0.1, ::1 or localhost"))
            }
        }
        XCTAssertEqual(
            "\(HTTPServerError.nonLoopback("10.0.0.1"))",
            "refusing to listen on \"10.0.0.1\": the HTTP server binds only to loopback; use 127.0.0.1, ::1 or localhost")
    }

    /// `beyondLoopback` (listen --bind) takes any IP literal, never a name (no DNS); the
    /// literals are resolved, not bound, so the test listens on nothing but loopback.
    func testBeyondLoopbackTakesAddressLiteralsOnly() throws {
        for host in ["example.com", "", "localhost.example", "10.0.0.256", "[::1"] {
            XCTAssertThrowsError(try HTTPServer(host: host, beyondLoopback: true) { _ in HTTPResponseMessage(status: 200) }, host) { error in
                XCTAssertEqual(error as? HTTPServerError, HTTPServerError(
                    code: .nonLoopbackHost,
                    message: "cannot listen on \"\(host)\": give an IP address, not a name (0.0.0.0 or :: for every interface, or one of this host's addresses)"))
            }
        }
        XCTAssertEqual(Socket.anyLiteral("0.0.0.0"), .v4(0))
        XCTAssertEqual(Socket.anyLiteral("10.1.2.3"), .v4(inet_addr("10.1.2.3")))
        XCTAssertEqual(Socket.anyLiteral("::"), .v6Other([UInt8](repeating: 0, count: 16)))
        XCTAssertEqual(Socket.anyLiteral("[fe80::1]"), .v6Other([0xfe, 0x80] + [UInt8](repeating: 0, count: 13) + [1]))
        XCTAssertEqual(Socket.anyLiteral("::1"), .v6)
        XCTAssertTrue(HTTPServer.isAddressLiteral("0.0.0.0"))
        XCTAssertFalse(HTTPServer.isAddressLiteral("hooks.example.com"))
        let server = try HTTPServer(host: "127.0.0.3", beyondLoopback: true) { _ in HTTPResponseMessage(status: 204) }
        server.start()
        defer { server.stop() }
        let (status, output) = try runCurl(["http://127.0.0.3:\(server.port)/"])
        XCTAssertEqual(status, 0)
        XCTAssertTrue(output.hasPrefix("HTTP/1.1 204"), output)
    }

    func testLoopbackHostsAreServed() throws {
        for (host, urlHost) in [("localhost", "127.0.0.1"), ("::1", "[::1]"), ("127.0.0.2", "127.0.0.2")] {
            let server = try HTTPServer(host: host) { request in
                HTTPResponseMessage(status: 200, body: Data(request.target.utf8))
            }
            server.start()
            defer { server.stop() }
            XCTAssertNotEqual(server.port, 0)
            let (status, output) = try runCurl(["-g", "http://\(urlHost):\(server.port)/on-\(host)"])
            XCTAssertEqual(status, 0, host)
            XCTAssertEqual(output, "HTTP/1.1 200 OK\r\nContent-Length: \(4 + host.utf8.count)\r\n\r\n/on-\(host)")
        }
    }

    func testBindingAPortInUseThrowsBindFailed() throws {
        let first = try HTTPServer { _ in HTTPResponseMessage(status: 200) }
        defer { first.stop() }
        XCTAssertThrowsError(try HTTPServer(port: first.port) { _ in HTTPResponseMessage(status: 200) }) { error in
            let error = error as? HTTPServerError
            XCTAssertEqual(error?.code, .bindFailed)
            XCTAssertEqual(
                error?.message,
                "cannot bind 127.0.0.1 port \(first.port): Address already in use (errno 98); "
                    + "choose a free port, or 0 for an ephemeral one")
        }
    }

    func testConcurrentClientsAllSucceed() throws {
        let recorder = RequestRecorder()
        let inner = echoHandler(recorder)
        let server = try startServer(self) { request in
            Thread.sleep(forTimeInterval: 0.001)
            return inner(request)
        }
        let failures = RequestRecorder()
        let group = DispatchGroup()
        for client in 0..<8 {
            group.enter()
            Thread {
                defer { group.leave() }
                var connection: RawClient?
                for i in 0..<50 {
                    if i % 10 == 0 { connection = try? RawClient(port: server.port) }
                    let target = "/c\(client)/r\(i)"
                    connection?.send("POST \(target) HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n\(i % 10)!")
                    if connection?.readResponse() != echoResponse("POST", target, body: "\(i % 10)!") {
                        failures.record(HTTPRequestMessage(method: "FAILED", target: target))
                    }
                }
            }.start()
        }
        XCTAssertEqual(group.wait(timeout: .now() + 20), .success)
        XCTAssertEqual(failures.requests.map(\.target), [])
        XCTAssertEqual(recorder.requests.count, 400)
        XCTAssertEqual(Set(recorder.requests.map(\.target)).count, 400)
    }

    /// Keep-alive: 4 clients each send 500 requests on one connection; every request is
    /// answered, in order, on that connection, and the server saw exactly 4 connections.
    /// (Throughput is a benchmark: `HTTPServerBenchmarkTests`, `HUBSCRIPT_BENCH=1`.)
    func testKeepAliveServesManyRequestsPerConnection() throws {
        let recorder = RequestRecorder()
        let server = try startServer(self) { request in
            recorder.record(request)
            return HTTPResponseMessage(status: 200, body: Data(request.target.utf8))
        }
        let failures = RequestRecorder()
        let group = DispatchGroup()
        // Opened here and kept until the end, so the server's count is read while they are open.
        let connections = try (0..<4).map { _ in try RawClient(port: server.port) }
        for (client, connection) in connections.enumerated() {
            group.enter()
            Thread {
                defer { group.leave() }
                for i in 0..<500 {
                    let target = "/c\(client)/r\(i)"
                    connection.send("GET \(target) HTTP/1.1\r\nHost: x\r\n\r\n")
                    let expected = "HTTP/1.1 200 OK\r\nContent-Length: \(target.utf8.count)\r\n\r\n\(target)"
                    guard connection.readResponse() == expected else {
                        return failures.record(HTTPRequestMessage(method: "FAILED", target: target))
                    }
                }
            }.start()
        }
        XCTAssertEqual(group.wait(timeout: .now() + 60), .success)
        XCTAssertEqual(failures.requests.map { "\($0.method) \($0.target)" }, [])
        XCTAssertEqual(recorder.requests.count, 2_000)
        XCTAssertEqual(server.openConnectionCount, 4, "one kept-alive connection per client")
        withExtendedLifetime(connections) {}
    }

    func testStopWhileClientsAreConnectedEndsCleanlyAndThePortCanBeBoundAgain() throws {
        let baseline = openDescriptorCount()
        XCTAssertGreaterThanOrEqual(baseline, 3, "stdin, stdout and stderr at least: the count works")
        let entered = DispatchSemaphore(value: 0)
        let server = try HTTPServer(limits: .init(shutdownGracePeriod: 3)) { request in
            if request.target == "/slow" {
                entered.signal()
                Thread.sleep(forTimeInterval: 0.3)
            }
            return HTTPResponseMessage(status: 200, body: Data(request.target.utf8))
        }
        server.start()
        let port = server.port
        var idle: RawClient? = try RawClient(port: port)
        idle?.send("GET /first HTTP/1.1\r\n\r\n")
        XCTAssertEqual(idle?.readResponse(), "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\n/first")
        var busy: RawClient? = try RawClient(port: port)
        busy?.send("GET /slow HTTP/1.1\r\n\r\n")
        XCTAssertEqual(entered.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(server.openConnectionCount, 2)

        let started = Date()
        server.stop()
        let took = Date().timeIntervalSince(started)
        XCTAssertLessThan(took, 2, "stop() waited for the idle connection")
        XCTAssertEqual(server.openConnectionCount, 0)

        let slowRest = busy?.readToEnd()
        XCTAssertEqual(slowRest?.text, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\n/slow")
        XCTAssertEqual(slowRest?.closed, true)
        let idleRest = idle?.readToEnd()
        XCTAssertEqual(idleRest?.text, "")
        XCTAssertEqual(idleRest?.closed, true)
        XCTAssertThrowsError(try RawClient(port: port), "still accepting after stop()") { assertConnectionRefused($0) }

        server.stop()
        server.waitUntilStopped()
        idle = nil
        busy = nil
        XCTAssertLessThanOrEqual(openDescriptorCount(), baseline, "descriptors leaked")

        let second = try HTTPServer(port: port) { _ in HTTPResponseMessage(status: 204) }
        second.start()
        defer { second.stop() }
        let client = try RawClient(port: port)
        client.send("GET / HTTP/1.1\r\n\r\n")
        XCTAssertEqual(client.readResponse(), "HTTP/1.1 204 No Content\r\n\r\n")
    }

    func testStopClosesConnectionsWhoseHandlerOutlivesTheGracePeriod() throws {
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let server = try HTTPServer(limits: .init(shutdownGracePeriod: 0.2)) { _ in
            entered.signal()
            _ = release.wait(timeout: .now() + 10)
            return HTTPResponseMessage(status: 200)
        }
        server.start()
        let client = try RawClient(port: server.port)
        client.send("GET /hang HTTP/1.1\r\n\r\n")
        XCTAssertEqual(entered.wait(timeout: .now() + 5), .success)

        let started = Date()
        server.stop()
        XCTAssertLessThan(Date().timeIntervalSince(started), 2.5)
        let rest = client.readToEnd()
        XCTAssertEqual(rest.text, "")
        XCTAssertTrue(rest.closed)

        release.signal()
        let deadline = Date(timeIntervalSinceNow: 5)
        while server.openConnectionCount > 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        XCTAssertEqual(server.openConnectionCount, 0)
    }

    func testStopFromASignalDispatchSource() throws {
        let server = try startServer(self, handler: echoHandler())
        let port = server.port
        signal(SIGUSR2, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGUSR2, queue: .global())
        source.setEventHandler { server.stop() }
        source.resume()
        defer { source.cancel() }

        let stopped = DispatchSemaphore(value: 0)
        Thread {
            server.waitUntilStopped()
            stopped.signal()
        }.start()
        // libdispatch registers the source asynchronously, and a signal sent before
        // that is ignored (SIG_IGN), so keep signalling; extra stop() calls are no-ops.
        var signals = 0
        repeat {
            kill(getpid(), SIGUSR2)
            signals += 1
        } while stopped.wait(timeout: .now() + 0.05) == .timedOut && signals < 100
        XCTAssertLessThan(signals, 100, "the signal source never stopped the server")
        XCTAssertThrowsError(try RawClient(port: port)) { assertConnectionRefused($0) }
    }

    func testStopBeforeStartAndStartAfterStop() throws {
        let server = try HTTPServer { _ in HTTPResponseMessage(status: 200) }
        let port = server.port
        server.stop()
        server.waitUntilStopped()
        server.start()
        server.stop()
        XCTAssertThrowsError(try RawClient(port: port)) { assertConnectionRefused($0) }
    }

    /// A stopped server's port refuses connections (ECONNREFUSED), rather than accepting
    /// them or failing some other way.
    private func assertConnectionRefused(_ error: Error, file: StaticString = #filePath, line: UInt = #line) {
        let nsError = error as NSError
        XCTAssertEqual(nsError.domain, "RawClient", file: file, line: line)
        XCTAssertEqual(nsError.code, Int(ECONNREFUSED), "errno \(nsError.code)", file: file, line: line)
    }
}
