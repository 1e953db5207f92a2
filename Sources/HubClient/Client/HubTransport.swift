import Foundation
import HTTPKit

/// Timeouts for one HTTP exchange.
public struct HubTimeouts: Sendable, Equatable {
    /// Seconds to establish the connection.
    public var connect: TimeInterval
    /// Seconds without receiving bytes before the exchange fails.
    public var read: TimeInterval

    public init(connect: TimeInterval = 10, read: TimeInterval = 30) {
        self.connect = connect
        self.read = read
    }
}

/// Moves one HTTP exchange. Implementations are thread-safe: the client calls
/// `perform` from many threads at once.
///
/// Contract: `perform` returns whatever response arrived (any status, including 3xx;
/// the client decides what it means) or throws `HubTransportError` when none did.
/// A response known to be lost after the server committed the change (`dropped`) must
/// surface as `HubTransportError(.connectionLost)`, exactly like a live connection that
/// closes before the response; it is never returned.
public protocol HubTransport: Sendable {
    func perform(_ request: HTTPRequestMessage, baseURL: URL, timeouts: HubTimeouts) throws -> HTTPResponseMessage
}

/// Why no usable response arrived.
public struct HubTransportError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable {
        /// The connection broke before a full response arrived (it may have been processed).
        case connectionLost = "connection_lost"
        /// Could not connect (refused, DNS, unreachable); the request was not processed.
        case cannotConnect = "cannot_connect"
        /// No bytes arrived within the timeout.
        case timedOut = "timed_out"
        /// The body exceeded the byte limit.
        case tooLarge = "too_large"
        /// The URL is plain HTTP to a non-loopback host.
        case insecure = "insecure"
        /// The server speaks another protocol than the URL's scheme (plain HTTP on an
        /// `https://` URL's port, or TLS on an `http://` one). Nothing was processed and
        /// a retry cannot help: the client does not retry it.
        case wrongProtocol = "wrong_protocol"
        /// The server's TLS certificate did not verify against the trusted CAs
        /// (`TLSTrust`). Nothing was sent, and a retry cannot help: not retried.
        case untrustedCertificate = "untrusted_certificate"
        /// Anything else the HTTP stack reported.
        case other = "other"
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { "\(kind.rawValue): \(message)" }
}

/// Transport rules shared by every transport (docs/hub-api.md, "Client rules").
public enum HubTransportPolicy {
    /// The largest response body the client accepts: 16 MiB.
    public static let maxResponseBytes = 16 * 1024 * 1024

    /// Throws `.insecure` unless `url` is HTTPS, or HTTP to a loopback host
    /// (127.0.0.0/8, ::1, localhost).
    public static func validate(_ url: URL) throws {
        let scheme = url.scheme?.lowercased() ?? ""
        if scheme == "https" { return }
        if scheme == "http", let host = url.host, isLoopback(host) { return }
        throw HubTransportError(.insecure, "refusing \(url.absoluteString): only https:// is allowed, or http:// to 127.0.0.1, ::1 or localhost")
    }

    /// Whether `host` names the loopback interface.
    public static func isLoopback(_ host: String) -> Bool {
        var h = Substring(host.lowercased())
        while h.first == "[" { h.removeFirst() }
        while h.last == "]" { h.removeLast() }
        if h == "localhost" || h == "::1" || h == "0:0:0:0:0:0:0:1" { return true }
        let octets = h.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4, octets.allSatisfy({ UInt8($0) != nil }) else { return false }
        return octets[0] == "127"
    }
}

/// A transport that hands requests to a function in the same process: no sockets.
/// Used with `HubSandbox.handle` and with scripted fakes in tests.
public struct InProcessTransport: HubTransport {
    public let handler: @Sendable (HTTPRequestMessage) -> HTTPResponseMessage

    public init(handler: @escaping @Sendable (HTTPRequestMessage) -> HTTPResponseMessage) {
        self.handler = handler
    }

    public func perform(_ request: HTTPRequestMessage, baseURL: URL, timeouts: HubTimeouts) throws -> HTTPResponseMessage {
        try HubTransportPolicy.validate(baseURL)
        var request = request
        if request.headers["Host"] == nil, let host = baseURL.host {
            request.headers["Host"] = baseURL.port.map { "\(host):\($0)" } ?? host
        }
        let response = handler(request)
        if response.dropped {
            throw HubTransportError(.connectionLost, "the connection closed before the response arrived")
        }
        if response.body.count > HubTransportPolicy.maxResponseBytes {
            throw HubTransportError(.tooLarge, "response body exceeds \(HubTransportPolicy.maxResponseBytes) bytes")
        }
        return response
    }
}
