#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Socket {
    /// Connects a blocking, close-on-exec TCP socket to a loopback `address:port`, with
    /// Nagle off and `timeout` seconds on each receive and send. Returns the fd or errno.
    static func connect(to address: Loopback, port: UInt16, timeout: Double) -> Result<Int32, HTTPClientError> {
        let family = address == .v6 ? AF_INET6 : AF_INET
        let fd = socket(family, streamType | closeOnExec, 0)
        guard fd >= 0 else { return .failure(HTTPClientError(.cannotConnect, "cannot create a socket: \(errorText(errno))")) }
        let result: Int32
        switch address {
        case .v4(let raw):
            var sin = sockaddr_in()
            sin.sin_family = sa_family_t(AF_INET)
            sin.sin_port = port.bigEndian
            sin.sin_addr.s_addr = raw
            result = withUnsafePointer(to: &sin) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        case .v6:
            var sin6 = sockaddr_in6()
            sin6.sin6_family = sa_family_t(AF_INET6)
            sin6.sin6_port = port.bigEndian
            sin6.sin6_addr = in6addr_loopback
            result = withUnsafePointer(to: &sin6) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            return .failure(HTTPClientError(.cannotConnect, "cannot connect to port \(port): \(errorText(code))"))
        }
        configureConnection(fd, timeout: timeout)
        return .success(fd)
    }
}
