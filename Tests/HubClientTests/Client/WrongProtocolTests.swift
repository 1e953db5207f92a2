import Foundation
@testable import HTTPKit
import Testing
@testable import HubClient
#if canImport(Glibc)
import Glibc
#endif

/// A hub_url whose scheme does not match what the server speaks: `https://` on a
/// plain-HTTP port (the served sandbox) fails at once, once, saying what to do —
/// libcurl would otherwise busy-poll a CPU waiting for a TLS answer, three read
/// timeouts long — and `http://` on a port that answers in TLS says so too.
@Suite("Wrong protocol for the URL")
struct WrongProtocolTests {
    @Test("https:// to a plain-HTTP server fails at once with wrong_protocol, on the URLSession path")
    func httpsToPlainHTTP() throws {
        let server = try HTTPServer(host: "127.0.0.1") { _ in HTTPResponseMessage(status: 200) }
        server.start()
        defer { server.stop() }
        let started = Date()
        let error = transportError {
            _ = try LiveTransport().perform(HTTPRequestMessage(method: "GET", target: "/v1/health"),
                                            baseURL: URL(string: "https://127.0.0.1:\(server.port)/v1")!, timeouts: HubTimeouts())
        }
        #expect(error == HubTransportError(.wrongProtocol,
            "https://127.0.0.1:\(server.port): the server answered in plain HTTP (HTTP/1.1 400 Bad Request), not TLS; "
            + "for a plain-HTTP loopback server such as `hubscript sandbox serve`, use http://127.0.0.1:\(server.port)"))
        #expect(Date().timeIntervalSince(started) < 5)
    }

    @Test("through the client it is one attempt, a transport_error with reason wrong_protocol and a hint")
    func notRetried() throws {
        let server = try HTTPServer(host: "127.0.0.1") { _ in HTTPResponseMessage(status: 200) }
        server.start()
        defer { server.stop() }
        let events = EventLog()
        var options = HubClientOptions(warn: { _ in })
        options.observe = { events.append($0) }
        let client = try HubClient(baseURL: URL(string: "https://127.0.0.1:\(server.port)")!, credential: .none,
                                   transport: LiveTransport(), options: options)
        var thrown: HubError?
        do { _ = try client.get("/health") } catch let e as HubError { thrown = e }
        #expect(thrown?.code == HubError.Code.transportError)
        #expect(thrown?.message.hasPrefix("https://127.0.0.1:\(server.port): the server answered in plain HTTP") == true)
        #expect(thrown?.details?["reason"]?.stringValue == "wrong_protocol")
        #expect(thrown?.hint == "Fix the profile's hub_url: http:// for a plain-HTTP loopback server such as `hubscript sandbox serve`, "
            + "https:// for a TLS one. Nothing reached the Hub.")
        let failures = events.all.filter { if case .transportFailed = $0 { true } else { false } }
        let retries = events.all.filter { if case .retrying = $0 { true } else { false } }
        #expect(failures.count == 1)
        #expect(retries.isEmpty)
        // Other transport errors are still retried: a refused port goes three times.
        let refused = try FullBacklogListener.unusedPort()
        let again = EventLog()
        options.observe = { again.append($0) }
        options.retry.baseDelay = 0.01
        let other = try HubClient(baseURL: URL(string: "https://127.0.0.1:\(refused)")!, credential: .none,
                                  transport: LiveTransport(), options: options)
        #expect(throws: HubError.self) { _ = try other.get("/health") }
        #expect(again.all.filter { if case .transportFailed = $0 { true } else { false } }.count == 3)
    }

    @Test("the client never retries wrong_protocol, whatever the transport")
    func pipelineGivesUpAtOnce() throws {
        let transport = WrongProtocolTransport()
        var options = HubClientOptions(warn: { _ in })
        options.retry.baseDelay = 0.001
        let client = try HubClient(baseURL: URL(string: "https://hub.example.com")!, credential: .none,
                                   transport: transport, options: options)
        var thrown: HubError?
        do { _ = try client.get("/health") } catch let e as HubError { thrown = e }
        #expect(thrown?.code == HubError.Code.transportError)
        #expect(thrown?.message == "https://hub.example.com:443: the server answered in plain HTTP (HTTP/1.0 400), not TLS")
        #expect(transport.calls == 1)
    }

    @Test("http:// to a server answering in TLS fails with wrong_protocol, on the loopback path")
    func httpToTLS() throws {
        let tls = try TLSAlertListener()
        let error = transportError {
            _ = try LiveTransport().perform(HTTPRequestMessage(method: "GET", target: "/health"),
                                            baseURL: URL(string: "http://127.0.0.1:\(tls.port)")!, timeouts: HubTimeouts())
        }
        #expect(error == HubTransportError(.wrongProtocol,
            "http://127.0.0.1:\(tls.port): the server answered in TLS, not plain HTTP; use https://127.0.0.1:\(tls.port)"))
    }

    @Test("the advice fits the host: loopback may use http://, any other host must find its TLS port")
    func advice() {
        let plain = "the server answered in plain HTTP (HTTP/1.1 400 Bad Request), not TLS"
        #expect(LiveTransport.notTLS(URL(string: "https://hub.example.com:8080/v1")!, plain)
            == "https://hub.example.com:8080: \(plain); set hub_url to the server's HTTPS address "
            + "(plain HTTP is allowed only to 127.0.0.1, ::1 and localhost)")
        #expect(LiveTransport.notTLS(URL(string: "https://localhost")!, plain)
            == "https://localhost:443: \(plain); for a plain-HTTP loopback server such as `hubscript sandbox serve`, use http://localhost:443")
        let other = "the server answered with bytes that are not TLS (\"SSH-2.0-OpenSSH_9.2\")"
        #expect(LiveTransport.notTLS(URL(string: "https://hub.example.com:22")!, other)
            == "https://hub.example.com:22: \(other); check the port in hub_url")
    }

    private func transportError(_ body: () throws -> Void) -> HubTransportError? {
        do { try body() } catch let e as HubTransportError { return e } catch { return nil }
        return nil
    }
}

/// A transport whose every exchange meets a plain-HTTP server on an https:// port.
final class WrongProtocolTransport: HubTransport, @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var calls: Int { lock.withLock { count } }

    func perform(_ request: HTTPRequestMessage, baseURL: URL, timeouts: HubTimeouts) throws -> HTTPResponseMessage {
        lock.withLock { count += 1 }
        throw HubTransportError(.wrongProtocol, "https://hub.example.com:443: the server answered in plain HTTP (HTTP/1.0 400), not TLS")
    }
}

/// Client events, collected across threads.
final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [HubClientEvent] = []
    func append(_ event: HubClientEvent) { lock.withLock { events.append(event) } }
    var all: [HubClientEvent] { lock.withLock { events } }
}

/// A loopback listener that answers each connection's first bytes with a TLS fatal
/// alert and closes, as a TLS server does when a client speaks plain HTTP to it.
final class TLSAlertListener: @unchecked Sendable {
    let port: UInt16
    private let fd: Int32

    init() throws {
        let (listener, bound) = try Socket.blockingLoopbackListener()
        fd = listener
        port = bound
        Thread.detachNewThread {
            while true {
                let connection = accept(listener, nil, nil)
                guard connection >= 0 else { return }
                var scratch = [UInt8](repeating: 0, count: 4096)
                _ = scratch.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
                let alert: [UInt8] = [0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 0x46]   // fatal protocol_version
                _ = alert.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                close(connection)
            }
        }
    }

    deinit {
        shutdown(fd, Int32(SHUT_RDWR))   // wakes the accepting thread
        close(fd)
    }
}
