#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Socket {
    /// Connects a blocking, close-on-exec TCP socket to a loopback `address:port`, with
    /// Nagle off and `timeout` seconds on each receive and send. The connection itself
    /// must be made within `connectTimeout` seconds (a listener whose backlog is full
    /// never answers the handshake). Returns the fd or why not.
    static func connect(to address: Loopback, port: UInt16, timeout: Double,
                        connectTimeout: Double) -> Result<Int32, HTTPClientError> {
        let family = address.isV6 ? AF_INET6 : AF_INET
        let fd = socket(family, streamType | closeOnExec, 0)
        guard fd >= 0 else { return .failure(HTTPClientError(.cannotConnect, "cannot create a socket: \(errorText(errno))")) }
        let code = withSocketAddress(address, port: port) { connectBounded(fd, $0, $1, seconds: connectTimeout) }
        guard code == 0 else {
            close(fd)
            return .failure(connectFailure(code, what: "port \(port)", seconds: connectTimeout))
        }
        configureConnection(fd, timeout: timeout)
        return .success(fd)
    }

    /// The error for a failed connect: `ETIMEDOUT` from `connectBounded` says the
    /// handshake did not finish in time.
    static func connectFailure(_ code: Int32, what: String, seconds: Double) -> HTTPClientError {
        if code == ETIMEDOUT {
            return HTTPClientError(.cannotConnect, "no connection to \(what) within \(formatSeconds(seconds)) s (the connect timeout)")
        }
        return HTTPClientError(.cannotConnect, "cannot connect to \(what): \(errorText(code))")
    }

    static func formatSeconds(_ s: Double) -> String {
        s == s.rounded() ? String(Int(s)) : String(s)
    }

    /// Connects blocking socket `fd` to `address`, waiting at most `seconds` for the
    /// handshake (a non-blocking connect and `poll`), then makes it blocking again.
    /// Returns 0, or the errno (`ETIMEDOUT` when the time ran out).
    static func connectBounded(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t, seconds: Double) -> Int32 {
        let flags = fcntl(fd, F_GETFL, 0)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 else { return errno }
        defer { _ = fcntl(fd, F_SETFL, flags) }
        #if canImport(Glibc)
        if Glibc.connect(fd, address, length) == 0 { return 0 }
        #else
        if Darwin.connect(fd, address, length) == 0 { return 0 }
        #endif
        guard errno == EINPROGRESS || errno == EINTR else { return errno }
        let deadline = monotonicSeconds() + max(0, seconds)
        var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        while true {
            let left = deadline - monotonicSeconds()
            guard left > 0 else { return ETIMEDOUT }
            let n = poll(&pfd, 1, Int32(min(left * 1000, Double(Int32.max)).rounded(.up)))
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return errno }
            if n == 0 { continue }   // re-check the deadline
            var soError: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &size) == 0 else { return errno }
            return soError
        }
    }

    /// Seconds on a clock that never jumps.
    static func monotonicSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
