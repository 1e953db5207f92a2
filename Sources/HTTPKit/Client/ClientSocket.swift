#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Socket {
    /// Connects a blocking, close-on-exec TCP socket to a loopback `address:port`, with
    /// Nagle off and `timeout` seconds on each receive and send. Returns the fd or errno.
    static func connect(to address: Loopback, port: UInt16, timeout: Double) -> Result<Int32, HTTPClientError> {
        let family = address.isV6 ? AF_INET6 : AF_INET
        let fd = socket(family, streamType | closeOnExec, 0)
        guard fd >= 0 else { return .failure(HTTPClientError(.cannotConnect, "cannot create a socket: \(errorText(errno))")) }
        let result = withSocketAddress(address, port: port) { Glibc.connect(fd, $0, $1) }
        guard result == 0 else {
            let code = errno
            close(fd)
            return .failure(HTTPClientError(.cannotConnect, "cannot connect to port \(port): \(errorText(code))"))
        }
        configureConnection(fd, timeout: timeout)
        return .success(fd)
    }
}
