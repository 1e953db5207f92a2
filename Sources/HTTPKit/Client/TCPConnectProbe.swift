#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Checks that a TCP connection to `host:port` can be made within a time limit, then
/// closes it without sending anything.
///
/// For transports whose HTTP stack offers no connect timeout of its own (URLSession
/// over libcurl bounds the connect only by its idle timer): probing first makes an
/// unreachable or blackholed host fail after the connect timeout, and since nothing
/// was sent, the request is known not to have been processed.
public enum TCPConnectProbe {
    /// Resolves `host` (DNS, `getaddrinfo`) and connects to each of its addresses in
    /// turn until one answers; the handshake gets at most `timeout` seconds in total.
    /// - Throws: `HTTPClientError(.cannotConnect)` saying why (refused, unresolvable,
    ///   or no handshake within the timeout).
    public static func check(host: String, port: UInt16, timeout: Double) throws {
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
            close(fd)
            if code == 0 { return }
            lastError = Socket.connectFailure(code, what: "\(host):\(port)", seconds: timeout)
            if code == ETIMEDOUT { throw lastError }
        }
        throw lastError
    }
}
