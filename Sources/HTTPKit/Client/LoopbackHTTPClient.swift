import Foundation
import Synchronization

/// A small HTTP/1.1 client for plain HTTP to loopback hosts (the served sandbox, local
/// development servers), with a pool of keep-alive connections.
///
/// Why not URLSession here: on Linux it runs over libcurl, whose per-request overhead
/// dominates on loopback, and which silently resends a request when a reused
/// connection dies — for a write, a second write. This client never resends: a request
/// on a reused connection that gets no byte back fails with `connectionLost`, and the
/// caller's retry rules decide (the Hub client retries writes only with an
/// Idempotency-Key). HTTPS always goes through URLSession.
///
/// Thread-safe: each request uses one connection exclusively.
public final class LoopbackHTTPClient: Sendable {
    public let maxIdlePerHost: Int
    public let maxResponseBytes: Int
    /// Idle keep-alive connections by host and port.
    private let idle = Mutex<[String: [Int32]]>([:])

    public init(maxIdlePerHost: Int = 8, maxResponseBytes: Int = 16 << 20) {
        self.maxIdlePerHost = maxIdlePerHost
        self.maxResponseBytes = maxResponseBytes
    }

    deinit {
        idle.withLock { idle in for fds in idle.values { for fd in fds { close(fd) } } }
    }

    /// Whether `host` is a loopback host this client serves.
    public static func isLoopback(_ host: String) -> Bool { Socket.loopback(host) != nil }

    /// Sends `request` to `host:port` and returns the response. `timeout` bounds each
    /// wait for bytes, `connectTimeout` (default: `timeout`) a new connection's
    /// handshake. A response with `Connection: close` closes its connection.
    public func perform(_ request: HTTPRequestMessage, host: String, port: UInt16, timeout: Double,
                        connectTimeout: Double? = nil) throws -> HTTPResponseMessage {
        guard let address = Socket.loopback(host) else {
            throw HTTPClientError(.notLoopback, "\(host) is not a loopback host; plain HTTP is only for loopback")
        }
        let poolKey = "\(host):\(port)"
        let wire = encode(request, host: host, port: port)
        let (fd, reused) = try connection(poolKey, address: address, port: port, timeout: timeout,
                                          connectTimeout: connectTimeout ?? timeout)
        var reader = HTTPResponseReader(fd: fd, maxBodyBytes: maxResponseBytes)
        do {
            let sent = wire.withUnsafeBytes { Socket.sendAll(fd, $0) }
            guard sent else { throw HTTPClientError(.connectionLost, "the connection closed while sending the request") }
            let response = try reader.read(isHead: request.method == "HEAD")
            if response.keepAlive { checkIn(fd, poolKey) } else { close(fd) }
            return response.message
        } catch let error as HTTPClientError {
            close(fd)
            // A pooled connection the server had already closed: nothing was processed
            // for a GET we can safely try once more on a fresh connection.
            if reused && !reader.receivedAny && error.kind == .connectionLost && request.method == "GET" {
                return try perform(request, host: host, port: port, timeout: timeout, connectTimeout: connectTimeout)
            }
            throw error
        }
    }

    private func connection(_ key: String, address: Socket.Loopback, port: UInt16, timeout: Double,
                            connectTimeout: Double) throws -> (Int32, Bool) {
        if let fd = idle.withLock({ $0[key]?.popLast() }) {
            Socket.setTimeout(fd, timeout)
            return (fd, true)
        }
        return (try Socket.connect(to: address, port: port, timeout: timeout, connectTimeout: connectTimeout).get(), false)
    }

    private func checkIn(_ fd: Int32, _ key: String) {
        let kept = idle.withLock { idle -> Bool in
            guard idle[key, default: []].count < maxIdlePerHost else { return false }
            idle[key, default: []].append(fd)
            return true
        }
        if !kept { close(fd) }
    }

    /// The request's wire bytes. The client frames the message itself: `Host`,
    /// `Content-Length`, `Connection` and `Transfer-Encoding` from the caller are dropped,
    /// and so is any header whose value holds CR or LF (it would split the head).
    func encode(_ request: HTTPRequestMessage, host: String, port: UInt16) -> [UInt8] {
        var wire = [UInt8]()
        wire.reserveCapacity(512 + request.body.count)
        func put(_ s: String) { wire.append(contentsOf: s.utf8) }
        put(request.method); put(" "); put(request.target); put(" HTTP/1.1\r\nHost: "); put(host); put(":\(port)\r\n")
        for field in request.headers {
            if Self.framingHeaders.contains(where: { HTTPHeaders.namesMatch($0, field.name) }) { continue }
            if field.value.utf8.contains(where: { $0 == 13 || $0 == 10 }) { continue }
            put(field.name); put(": "); put(field.value); put("\r\n")
        }
        if !request.body.isEmpty || request.method == "POST" || request.method == "PUT" || request.method == "PATCH" {
            put("Content-Length: \(request.body.count)\r\n")
        }
        put("\r\n")
        wire.append(contentsOf: request.body)
        return wire
    }

    private static let framingHeaders = ["Host", "Content-Length", "Connection", "Transfer-Encoding"]
}
