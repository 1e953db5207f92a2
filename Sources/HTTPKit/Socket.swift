#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The only file in HTTPKit that calls the C socket API.
///
/// Everything here works on raw file descriptors (`Int32`) and reports failures as
/// `errno` values or ``HTTPServerError``s; callers never see C types.
enum Socket {
    /// The address family and address a host name resolves to: a loopback one, or — for
    /// a server explicitly asked to listen beyond loopback (`anyLiteral`) — any literal.
    enum Loopback: Equatable {
        case v4(UInt32)  // network byte order
        case v6
        /// An IPv6 address other than ::1 (its 16 bytes), only from `anyLiteral`.
        case v6Other([UInt8])
    }

    /// Resolves an IPv4 or IPv6 literal (optionally in brackets) without DNS, loopback or
    /// not: "0.0.0.0", "::", "10.1.2.3", "::1", "localhost". A name that needs DNS is `nil`.
    static func anyLiteral(_ host: String) -> Loopback? {
        if let loopback = loopback(host) { return loopback }
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return .v4(v4.s_addr) }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, bare, &v6) == 1 else { return nil }
        return .v6Other(withUnsafeBytes(of: &v6) { Array($0) })
    }

    /// Resolves `host` to a loopback address without DNS: "localhost", an IPv4 literal
    /// in 127.0.0.0/8, or the IPv6 literal ::1 (optionally in brackets). Anything else
    /// is `nil`.
    static func loopback(_ host: String) -> Loopback? {
        if host.lowercased() == "localhost" { return .v4(inet_addr("127.0.0.1")) }
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 {
            return UInt32(bigEndian: v4.s_addr) >> 24 == 127 ? .v4(v4.s_addr) : nil
        }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        var v6 = in6_addr()
        if inet_pton(AF_INET6, bare, &v6) == 1 {
            let bytes = withUnsafeBytes(of: &v6) { Array($0) }
            return bytes == [UInt8](repeating: 0, count: 15) + [1] ? .v6 : nil
        }
        return nil
    }

    /// Creates a non-blocking, close-on-exec listening socket bound to `address:port`
    /// (`SO_REUSEADDR` set, so a stopped server's port can be bound again at once) and
    /// returns it with the port actually bound.
    /// Calls `body` with the `sockaddr` of `address:port` and its length.
    static func withSocketAddress(_ address: Loopback, port: UInt16,
                                  _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        switch address {
        case .v4(let raw):
            var sin = sockaddr_in()
            sin.sin_family = sa_family_t(AF_INET)
            sin.sin_port = port.bigEndian
            sin.sin_addr.s_addr = raw
            return withUnsafePointer(to: &sin) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        case .v6, .v6Other:
            var sin6 = sockaddr_in6()
            sin6.sin6_family = sa_family_t(AF_INET6)
            sin6.sin6_port = port.bigEndian
            sin6.sin6_addr = in6addr_loopback
            if case .v6Other(let bytes) = address {
                withUnsafeMutableBytes(of: &sin6.sin6_addr) { raw in
                    for (index, byte) in bytes.prefix(raw.count).enumerated() { raw[index] = byte }
                }
            }
            return withUnsafePointer(to: &sin6) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        }
    }

    static func listen(on address: Loopback, host: String, port: UInt16, backlog: Int32) throws -> (fd: Int32, port: UInt16) {
        let family = address.isV6 ? AF_INET6 : AF_INET
        let fd = socket(family, streamType | closeOnExec, 0)
        guard fd >= 0 else {
            throw HTTPServerError(code: .socketFailed, message: "cannot create a socket: \(errorText(errno))")
        }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if address.isV6 { setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size)) }

        let bound = withSocketAddress(address, port: port) { bind(fd, $0, $1) }
        guard bound == 0 else {
            let code = errno
            close(fd)
            throw HTTPServerError(
                code: .bindFailed,
                message: "cannot bind \(host) port \(port): \(errorText(code)); "
                    + "choose a free port, or 0 for an ephemeral one")
        }
        guard cListen(fd, backlog) == 0 else {
            let code = errno
            close(fd)
            throw HTTPServerError(code: .listenFailed, message: "cannot listen on \(host) port \(port): \(errorText(code))")
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return (fd, boundPort(fd))
    }

    /// A blocking listener on 127.0.0.1 at an ephemeral port (test servers that answer
    /// with scripted bytes from a thread of their own).
    static func blockingLoopbackListener() throws -> (fd: Int32, port: UInt16) {
        let (fd, port) = try listen(on: .v4(inet_addr("127.0.0.1")), host: "127.0.0.1", port: 0, backlog: 16)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return (fd, port)
    }

    /// The local port `fd` is bound to.
    static func boundPort(_ fd: Int32) -> UInt16 {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let ok = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard ok == 0 else { return 0 }
        return withUnsafePointer(to: &storage) { pointer -> UInt16 in
            if Int32(pointer.pointee.ss_family) == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
        }
    }

    /// Sets up an accepted connection: no Nagle delay, and `timeout` seconds on each
    /// blocking receive and send (so a silent or stalled peer cannot hold a thread).
    static func configureConnection(_ fd: Int32, timeout: Double) {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Darwin)
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        setTimeout(fd, timeout)
    }

    /// Sets the receive and send timeouts of `fd` to `seconds`.
    static func setTimeout(_ fd: Int32, _ seconds: Double) {
        setReceiveTimeout(fd, seconds)
        var tv = timeval(seconds)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Sets the receive timeout of `fd` to `seconds` (at least a millisecond).
    static func setReceiveTimeout(_ fd: Int32, _ seconds: Double) {
        var tv = timeval(seconds)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    /// What ``receive(_:into:)`` produced.
    enum Received: Equatable {
        case bytes(Int)
        case endOfStream
        case timedOut
        case failed
    }

    /// Receives into `buffer` once, retrying on `EINTR`.
    static func receive(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Received {
        while true {
            let n = recv(fd, buffer.baseAddress, buffer.count, 0)
            if n > 0 { return .bytes(n) }
            if n == 0 { return .endOfStream }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .timedOut
            default: return .failed
            }
        }
    }

    /// Sends all of `bytes`, retrying on `EINTR` and short writes. Never raises
    /// SIGPIPE. Returns false if the peer is gone, the send timeout expired, or
    /// `within` seconds (if given) passed before the last byte was sent (a client that
    /// reads a byte now and then cannot hold the writer forever).
    static func sendAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, within seconds: Double? = nil) -> Bool {
        let deadline = seconds.map { ContinuousClock.now + .milliseconds(Int64(($0 * 1000).rounded(.up))) }
        var offset = 0
        while offset < bytes.count {
            if let deadline, offset > 0, ContinuousClock.now >= deadline { return false }
            let n = send(fd, bytes.baseAddress! + offset, bytes.count - offset, noSignal)
            if n > 0 {
                offset += n
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                return false
            }
        }
        return true
    }

    /// Waits until `fd` or `wake` is readable. Returns true if `wake` is readable.
    static func waitForListener(_ fd: Int32, orWake wake: Int32) -> Bool {
        var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
        while poll(&fds, 2, -1) < 0 && errno == EINTR {}
        return fds[1].revents != 0
    }

    /// A close-on-exec pipe used to wake a thread blocked in ``waitForListener(_:orWake:)``.
    static func makePipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            throw HTTPServerError(code: .socketFailed, message: "cannot create a wake-up pipe: \(errorText(errno))")
        }
        setCloseOnExec(fds[0])
        setCloseOnExec(fds[1])
        return (fds[0], fds[1])
    }

    static func setCloseOnExec(_ fd: Int32) {
        _ = fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC)
    }

    /// Writes one byte to a pipe.
    static func signal(_ fd: Int32) {
        var byte: UInt8 = 1
        _ = write(fd, &byte, 1)
    }

    /// Stops reading and writing on `fd`; wakes any thread blocked on it.
    static func shutdownBoth(_ fd: Int32) { _ = shutdown(fd, Int32(SHUT_RDWR)) }

    /// Stops reading on `fd`: a thread blocked receiving on it gets end of stream.
    static func shutdownRead(_ fd: Int32) { _ = shutdown(fd, Int32(SHUT_RD)) }

    /// Sends FIN after the last response; reads may continue.
    static func shutdownWrite(_ fd: Int32) { _ = shutdown(fd, Int32(SHUT_WR)) }

    static func close(_ fd: Int32) {
        #if canImport(Glibc)
        _ = Glibc.close(fd)
        #else
        _ = Darwin.close(fd)
        #endif
    }

    static func errorText(_ code: Int32) -> String {
        "\(String(cString: strerror(code))) (errno \(code))"
    }

    #if canImport(Glibc)
    static let streamType = Int32(SOCK_STREAM.rawValue)
    static let closeOnExec = Int32(SOCK_CLOEXEC.rawValue)
    private static let noSignal = Int32(MSG_NOSIGNAL)
    #else
    static let streamType = SOCK_STREAM
    static let closeOnExec: Int32 = 0
    private static let noSignal: Int32 = 0
    #endif
}

// Free functions, so the names do not resolve to `Socket`'s own members.
#if canImport(Glibc)
private func cListen(_ fd: Int32, _ backlog: Int32) -> Int32 { Glibc.listen(fd, backlog) }
#else
private func cListen(_ fd: Int32, _ backlog: Int32) -> Int32 { Darwin.listen(fd, backlog) }
#endif

extension Socket.Loopback {
    /// Whether the address is the IPv6 family.
    var isV6: Bool {
        switch self {
        case .v4: return false
        case .v6, .v6Other: return true
        }
    }
}

