#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Checks that a TCP connection to `host:port` can be made within a time limit, then
/// closes it; with `tls`, also that the server answers a TLS ClientHello in TLS.
///
/// For transports whose HTTP stack offers no connect timeout of its own (URLSession
/// over libcurl bounds the connect, and the TLS handshake, only by its idle timer):
/// probing first makes an unreachable or blackholed host fail after the connect
/// timeout, and since no request was sent, it is known not to have been processed.
///
/// The TLS check exists because libcurl under FoundationNetworking busy-polls while it
/// waits for a server's first TLS bytes (a whole CPU until the idle timeout): a server
/// that speaks plain HTTP on the port of an `https://` URL (`hubscript sandbox serve`
/// is one) never sends any. The probe sends a ClientHello (`TLSHello`) and reads the
/// first bytes back: a TLS record passes; `HTTP/…` or other bytes fail at once with
/// `wrongProtocol`; silence until the deadline fails with `cannotConnect`. A server
/// that just closes or resets passes: the HTTP stack's own handshake then says why.
public enum TCPConnectProbe {
    /// Resolves `host` (DNS, `getaddrinfo`) and connects to each of its addresses in
    /// turn until one answers; the handshake (and with `tls`, the server's first TLS
    /// bytes) gets at most `timeout` seconds in total.
    /// - Throws: `HTTPClientError(.cannotConnect)` saying why (refused, unresolvable,
    ///   no handshake or no TLS answer within the timeout); `HTTPClientError(.wrongProtocol)`
    ///   when the server answered the ClientHello in plain HTTP or other non-TLS bytes.
    public static func check(host: String, port: UInt16, timeout: Double, tls: Bool = false) throws {
        var hints = addrinfo()
        hints.ai_socktype = Socket.streamType
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let rc = getaddrinfo(bare, String(port), &hints, &list)
        guard rc == 0, let first = list else {
            throw HTTPClientError(.cannotConnect, "cannot resolve \(host): \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(first) }
        let deadline = Socket.monotonicSeconds() + timeout
        var lastError = HTTPClientError(.cannotConnect, "\(host) has no address")
        var node: UnsafeMutablePointer<addrinfo>? = first
        while let info = node {
            node = info.pointee.ai_next
            let left = deadline - Socket.monotonicSeconds()
            guard left > 0 else {
                throw Socket.connectFailure(ETIMEDOUT, what: "\(host):\(port)", seconds: timeout)
            }
            let fd = socket(info.pointee.ai_family, Socket.streamType | Socket.closeOnExec, 0)
            guard fd >= 0 else { continue }
            let code = Socket.connectBounded(fd, info.pointee.ai_addr, info.pointee.ai_addrlen, seconds: left)
            defer { close(fd) }
            if code == 0 {
                if tls { try checkTLS(fd, host: host, port: port, deadline: deadline, timeout: timeout) }
                return
            }
            lastError = Socket.connectFailure(code, what: "\(host):\(port)", seconds: timeout)
            if code == ETIMEDOUT { throw lastError }
        }
        throw lastError
    }

    /// Sends a ClientHello on connected `fd` and classifies what comes back before `deadline`.
    private static func checkTLS(_ fd: Int32, host: String, port: UInt16, deadline: Double, timeout: Double) throws {
        var random = [UInt8](repeating: 0, count: 32)
        var generator = SystemRandomNumberGenerator()
        for i in random.indices { random[i] = generator.next() }
        let hello = TLSHello.clientHello(serverName: host, random: random)
        Socket.setTimeout(fd, max(0.001, deadline - Socket.monotonicSeconds()))
        guard hello.withUnsafeBytes({ Socket.sendAll(fd, $0) }) else { return }   // closed at once: libcurl will say
        var received: [UInt8] = []
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 512, alignment: 1)
        defer { scratch.deallocate() }
        while received.count < 512 {
            let left = deadline - Socket.monotonicSeconds()
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = left > 0 ? poll(&pfd, 1, Int32(min(left * 1000, Double(Int32.max)).rounded(.up))) : 0
            if ready < 0 && errno == EINTR { continue }
            if ready == 0 && Socket.monotonicSeconds() < deadline { continue }
            if ready == 0 {
                guard received.isEmpty else { break }
                throw HTTPClientError(.cannotConnect, "no TLS answer from \(host):\(port) within \(Socket.formatSeconds(timeout)) s "
                    + "(the connect timeout): the server there does not speak TLS, or is overloaded")
            }
            guard ready > 0, case .bytes(let n) = Socket.receive(fd, into: scratch) else { break }
            received += UnsafeRawBufferPointer(rebasing: scratch[0..<n])
            if TLSHello.classify(received, ended: false) != nil { break }
        }
        switch TLSHello.classify(received, ended: true) {
        case nil, .tls?: return
        case .plainHTTP(let statusLine)?:
            throw HTTPClientError(.wrongProtocol, "the server answered in plain HTTP (\(statusLine)), not TLS")
        case .other(let preview)?:
            throw HTTPClientError(.wrongProtocol, "the server answered with bytes that are not TLS (\"\(preview)\")")
        }
    }
}
