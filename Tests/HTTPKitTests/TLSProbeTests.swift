import Foundation
import XCTest
@testable import HTTPKit
#if canImport(Glibc)
import Glibc
#endif

/// The TLS check of `TCPConnectProbe` (a ClientHello, then the first bytes back), the
/// plain-HTTP server refusing a TLS handshake at once, and the loopback client
/// recognising a TLS answer: the two ways round of a URL whose scheme does not match
/// what the server speaks.
final class TLSProbeTests: XCTestCase {
    // MARK: The ClientHello and the answer

    func testTheClientHelloIsOneWellFormedHandshakeRecordWithSNIOnlyForNames() throws {
        let random = [UInt8](0..<32)
        let hello = TLSHello.clientHello(serverName: "hub.example.com", random: random)
        XCTAssertEqual(Array(hello[0..<3]), [0x16, 0x03, 0x01])                  // handshake record, TLS 1.0 framing
        XCTAssertEqual(Int(hello[3]) << 8 | Int(hello[4]), hello.count - 5)        // record length
        XCTAssertEqual(hello[5], 0x01)                                             // ClientHello
        XCTAssertEqual(Int(hello[6]) << 16 | Int(hello[7]) << 8 | Int(hello[8]), hello.count - 9)
        XCTAssertEqual(Array(hello[9..<11]), [0x03, 0x03])
        XCTAssertEqual(Array(hello[11..<43]), random)
        // The extensions block ends exactly at the end of the record.
        var at = 43
        at += 1 + Int(hello[at])                                                   // session id
        at += 2 + (Int(hello[at]) << 8 | Int(hello[at + 1]))                       // cipher suites
        at += 1 + Int(hello[at])                                                   // compression methods
        let extensionsLength = Int(hello[at]) << 8 | Int(hello[at + 1])
        XCTAssertEqual(at + 2 + extensionsLength, hello.count)
        var types: [Int] = []
        var e = at + 2
        while e < hello.count {
            types.append(Int(hello[e]) << 8 | Int(hello[e + 1]))
            e += 4 + (Int(hello[e + 2]) << 8 | Int(hello[e + 3]))
        }
        XCTAssertEqual(e, hello.count)
        XCTAssertEqual(types, [0x0000, 0x000a, 0x000b, 0x000d, 0x002b, 0x0033])
        XCTAssertNotNil(String(decoding: hello, as: UTF8.self).range(of: "hub.example.com"))
        XCTAssertEqual(TLSHello.clientHello(serverName: "hub.example.com.", random: random), hello)   // SNI has no trailing dot
        // A name too long for a DNS name gets no SNI rather than a malformed one.
        let long = TLSHello.clientHello(serverName: String(repeating: "a", count: 300), random: random)
        XCTAssertEqual(long.count, hello.count - (4 + 5 + "hub.example.com".utf8.count))
        // No SNI for address literals (RFC 6066 allows only host names).
        for literal in ["127.0.0.1", "::1", "[::1]"] {
            let bare = TLSHello.clientHello(serverName: literal, random: random)
            XCTAssertEqual(bare.count, hello.count - (4 + 5 + "hub.example.com".utf8.count), literal)
        }
    }

    func testTheFirstBytesBackAreClassified() {
        XCTAssertEqual(TLSHello.classify(Array("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n".utf8), ended: false),
                       .plainHTTP(statusLine: "HTTP/1.1 400 Bad Request"))
        XCTAssertEqual(TLSHello.classify([0x16, 0x03, 0x03, 0x00, 0x38, 0x02], ended: false), .tls)     // ServerHello
        XCTAssertEqual(TLSHello.classify([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28], ended: true), .tls) // an alert
        XCTAssertEqual(TLSHello.classify(Array("this is not TLS\r\n".utf8) + [0], ended: true),
                       .other(preview: "this is not TLS..."))
        XCTAssertEqual(TLSHello.classify(Array("SSH-2.0-OpenSSH_9.2".utf8), ended: false), .other(preview: "SSH-2.0-OpenSSH_9.2"))
        // Too few bytes to tell, unless the stream ended.
        XCTAssertNil(TLSHello.classify([], ended: true))
        XCTAssertNil(TLSHello.classify([0x16], ended: false))
        XCTAssertEqual(TLSHello.classify([0x16], ended: true), .tls)
        XCTAssertNil(TLSHello.classify(Array("HTT".utf8), ended: false))
        XCTAssertEqual(TLSHello.classify(Array("HTT".utf8), ended: true), .other(preview: "HTT"))
        XCTAssertEqual(TLSHello.classify([0x16, 0x01, 0x00], ended: false), .other(preview: "..."))
        // Hostile lengths: a status line is cut, and so is a preview.
        let long = Array(("HTTP/1.1 200 " + String(repeating: "x", count: 500)).utf8)
        XCTAssertEqual(TLSHello.classify(long, ended: false), .plainHTTP(statusLine: String(decoding: long.prefix(80), as: UTF8.self)))
        XCTAssertEqual(TLSHello.classify([UInt8](repeating: 0x41, count: 500), ended: false),
                       .other(preview: String(repeating: "A", count: 40)))
    }

    // MARK: The probe against real sockets

    func testAPlainHTTPServerOnTheProbedPortFailsAtOnceAsWrongProtocol() throws {
        let server = try HTTPServer(host: "127.0.0.1") { _ in HTTPResponseMessage(status: 200) }
        server.start()
        defer { server.stop() }
        let started = Date()
        XCTAssertThrowsError(try TCPConnectProbe.check(host: "127.0.0.1", port: server.port, timeout: 10, tls: true)) { error in
            XCTAssertEqual(error as? HTTPClientError,
                           HTTPClientError(.wrongProtocol, "the server answered in plain HTTP (HTTP/1.1 400 Bad Request), not TLS"))
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 2)
        // Without the TLS check the same port is simply reachable.
        XCTAssertNoThrow(try TCPConnectProbe.check(host: "127.0.0.1", port: server.port, timeout: 10))
    }

    func testASilentServerFailsAfterTheTimeoutWithoutSpinning() throws {
        let silent = try ScriptedListener(reply: nil)
        let started = Date()
        let cpuBefore = Self.cpuSeconds()
        XCTAssertThrowsError(try TCPConnectProbe.check(host: "127.0.0.1", port: silent.port, timeout: 0.5, tls: true)) { error in
            XCTAssertEqual(error as? HTTPClientError, HTTPClientError(.cannotConnect,
                "no TLS answer from 127.0.0.1:\(silent.port) within 0.5 s (the connect timeout): the server there does not speak TLS, or is overloaded"))
        }
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertGreaterThanOrEqual(elapsed, 0.45)
        XCTAssertLessThan(elapsed, 3)
        XCTAssertLessThan(Self.cpuSeconds() - cpuBefore, 0.25, "the wait polls, it does not spin")
    }

    func testATLSAnswerOrAClosedConnectionPassesAndOtherBytesFail() throws {
        let alert = try ScriptedListener(reply: [0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28])
        XCTAssertNoThrow(try TCPConnectProbe.check(host: "127.0.0.1", port: alert.port, timeout: 5, tls: true))
        // A server that just closes proves nothing either way: the HTTP stack's own handshake will say.
        let closing = try ScriptedListener(reply: [])
        XCTAssertNoThrow(try TCPConnectProbe.check(host: "localhost", port: closing.port, timeout: 5, tls: true))
        let text = try ScriptedListener(reply: Array("this is not TLS\r\n\r\n".utf8))
        XCTAssertThrowsError(try TCPConnectProbe.check(host: "127.0.0.1", port: text.port, timeout: 5, tls: true)) { error in
            XCTAssertEqual(error as? HTTPClientError,
                           HTTPClientError(.wrongProtocol, "the server answered with bytes that are not TLS (\"this is not TLS....\")"))
        }
    }

    // MARK: The server and the loopback client

    func testThePlainHTTPServerRefusesATLSHandshakeAtItsFirstByte() throws {
        for bytes: [UInt8] in [[0x16], [0x16, 0x03, 0x01, 0x00, 0xf4, 0x01], [13, 10, 0x16, 0x03]] {
            let outcome = bytes.withUnsafeBufferPointer {
                HTTPRequestParser.parseHead($0, maxHeaderBytes: 8192, maxBodyBytes: 1 << 20)
            }
            XCTAssertEqual(outcome, .failure(.tlsHandshake), "\(bytes)")
        }
        XCTAssertEqual(HTTPRequestError.tlsHandshake.message,
                       "a TLS handshake arrived, but this server speaks plain HTTP: use an http:// URL, not https://")
        // On the wire: a ClientHello gets the 400 at once, not after the idle timeout.
        let server = try HTTPServer(host: "127.0.0.1") { _ in HTTPResponseMessage(status: 200) }
        server.start()
        defer { server.stop() }
        let client = try RawClient(port: server.port, timeout: 5)
        client.send(TLSHello.clientHello(serverName: nil, random: [UInt8](repeating: 7, count: 32)))
        let started = Date()
        let answer = client.readToEnd()
        XCTAssertLessThan(Date().timeIntervalSince(started), 2)
        XCTAssertTrue(answer.closed)
        XCTAssertTrue(answer.text.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), answer.text)
        XCTAssertTrue(answer.text.hasSuffix(#"{"error":{"code":"invalid_request","message":"a TLS handshake arrived, but this server speaks plain HTTP: use an http:// URL, not https://"}}"#),
                      answer.text)
    }

    func testTheLoopbackClientRecognisesATLSAnswer() throws {
        let tls = try ScriptedListener(reply: [0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 0x46])
        let client = LoopbackHTTPClient()
        XCTAssertThrowsError(try client.perform(HTTPRequestMessage(method: "GET", target: "/"), host: "127.0.0.1",
                                                port: tls.port, timeout: 5)) { error in
            XCTAssertEqual(error as? HTTPClientError, HTTPClientError(.wrongProtocol, "the server answered in TLS, not plain HTTP"))
        }
    }

    /// User plus system CPU seconds of this process.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }
}

/// A loopback listener that answers every connection with fixed bytes: it reads what
/// the client sent first (up to 0.5 s), writes `reply` and closes. With `reply: nil`
/// it never accepts: connections complete in the backlog and hear nothing.
final class ScriptedListener: @unchecked Sendable {
    let port: UInt16
    private let fd: Int32
    private let stopped = StopFlag()

    init(reply: [UInt8]?) throws {
        let (listener, bound) = try Socket.blockingLoopbackListener()
        fd = listener
        port = bound
        guard let reply else { return }
        let stopped = stopped
        Thread.detachNewThread {
            while true {
                let connection = accept(listener, nil, nil)
                guard connection >= 0 else { return }
                defer { close(connection) }
                if stopped.isSet { return }
                var timeout = timeval(tv_sec: 0, tv_usec: 500_000)
                setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                var scratch = [UInt8](repeating: 0, count: 4096)
                _ = scratch.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
                _ = reply.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                shutdown(connection, Int32(SHUT_WR))
                _ = scratch.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            }
        }
    }

    deinit {
        stopped.set()
        shutdown(fd, Int32(SHUT_RDWR))   // wakes the accepting thread
        close(fd)
    }

    final class StopFlag: @unchecked Sendable {
        private let lock = NSLock()
        private var value = false
        var isSet: Bool { lock.withLock { value } }
        func set() { lock.withLock { value = true } }
    }
}
