import Foundation
import HTTPKit
import Testing
@testable import HubClient
#if canImport(Glibc)
import Glibc
#endif

/// The Hub client's timeouts: 10 s to connect, 30 s idle. A listener whose accept backlog is full
/// never completes a handshake (the kernel drops the SYNs), which is a blackholed host
/// on loopback, deterministically.
@Suite("Connect timeout")
struct ConnectTimeoutTests {
    @Test("the defaults are 10 s to connect and 30 s between bytes")
    func defaults() {
        #expect(HubTimeouts() == HubTimeouts(connect: 10, read: 30))
        #expect(HubClientOptions().timeouts.connect == 10)
    }

    @Test("a connect that never completes fails after the connect timeout, on the loopback client")
    func loopbackPath() throws {
        let listener = try FullBacklogListener()
        let started = Date()
        let error = transportError {
            _ = try LiveTransport().perform(HTTPRequestMessage(method: "GET", target: "/health"),
                                            baseURL: URL(string: "http://127.0.0.1:\(listener.port)")!,
                                            timeouts: HubTimeouts(connect: 0.5, read: 30))
        }
        #expect(error == HubTransportError(.cannotConnect, "no connection to port \(listener.port) within 0.5 s (the connect timeout)"))
        #expect(Date().timeIntervalSince(started) < 5)
    }

    @Test("a connect that never completes fails after the connect timeout, on the URLSession path")
    func urlSessionPath() throws {
        let listener = try FullBacklogListener()
        let transport = LiveTransport(loopbackFastPath: false)
        let started = Date()
        let error = transportError {
            _ = try transport.perform(HTTPRequestMessage(method: "GET", target: "/health"),
                                      baseURL: URL(string: "https://127.0.0.1:\(listener.port)")!,
                                      timeouts: HubTimeouts(connect: 0.5, read: 30))
        }
        #expect(error == HubTransportError(.cannotConnect, "no connection to 127.0.0.1:\(listener.port) within 0.5 s (the connect timeout)"))
        #expect(Date().timeIntervalSince(started) < 5)
    }

    @Test("the probe reports a refused port at once, and no probe is made through a proxy")
    func refusedAndProxied() throws {
        let port = try FullBacklogListener.unusedPort()
        let error = transportError {
            try LiveTransport(loopbackFastPath: false).ensureReachable(URL(string: "https://127.0.0.1:\(port)")!, timeout: 5)
        }
        #expect(error == HubTransportError(.cannotConnect, "cannot connect to 127.0.0.1:\(port): Connection refused (errno 111)"))
        #expect(LiveTransport.proxyConfigured(["https_proxy": "http://proxy:3128"]))
        #expect(LiveTransport.proxyConfigured(["ALL_PROXY": "socks5://p"]))
        #expect(!LiveTransport.proxyConfigured(["https_proxy": "", "PATH": "/bin"]))
    }

    @Test("through the client, a connect timeout is a transport_error naming it")
    func throughTheClient() throws {
        let listener = try FullBacklogListener()
        var options = HubClientOptions(warn: { _ in })
        options.timeouts = HubTimeouts(connect: 0.3, read: 30)
        options.retry.maxAttempts = 1
        let client = try HubClient(baseURL: URL(string: "https://127.0.0.1:\(listener.port)")!, credential: .none,
                                   transport: LiveTransport(loopbackFastPath: false), options: options)
        var thrown: HubError?
        do { _ = try client.get("/health") } catch let e as HubError { thrown = e }
        #expect(thrown?.code == HubError.Code.transportError)
        #expect(thrown?.message.contains("within 0.3 s (the connect timeout)") == true)
    }

    private func transportError(_ body: () throws -> Void) -> HubTransportError? {
        do { try body() } catch let e as HubTransportError { return e } catch { return nil }
        return nil
    }
}

/// A loopback listener with a backlog of 0 and one connection waiting in it, never
/// accepted: further connects get no handshake.
final class FullBacklogListener {
    let port: UInt16
    private let listener: Int32
    private let filler: Int32

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) } }
        guard bound == 0, listen(listener, 0) == 0 else { throw POSIXError(.EADDRINUSE) }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
        let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        let connected = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, length) } }
        guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
        self.listener = listener
        self.filler = filler
        port = UInt16(bigEndian: addr.sin_port)
    }

    deinit {
        close(filler)
        close(listener)
    }

    /// A port nothing listens on (bound, then closed).
    static func unusedPort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return UInt16(bigEndian: addr.sin_port)
    }
}
