import Foundation
import HTTPKit

/// Moves one HTTP exchange to a Dispatch server: returns whatever response arrived (any
/// status) or throws when none did. The client adds nothing but the request itself: the
/// transport owns sockets, TLS, timeouts and the `Host` header.
///
/// The composition layer passes the Hub client's live transport (HTTPS, or plain HTTP
/// to loopback) or an in-process `DispatchSandbox` (`DispatchTransports.inProcess`).
public protocol DispatchTransport: Sendable {
    func perform(_ request: HTTPRequestMessage, baseURL: URL) throws -> HTTPResponseMessage
}

/// Why no response arrived. Any other error a transport throws counts as `.lost`.
public struct DispatchTransportError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable {
        /// The request never reached the server (refused, unreachable): safe to retry.
        case notSent = "not_sent"
        /// The connection broke or timed out after sending: the server may have accepted
        /// it. Retried with the same Idempotency-Key, which the server replays.
        case lost = "lost"
        /// Retrying cannot help (a refused URL, a response over the size limit).
        case permanent = "permanent"
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}

/// Transports made from closures.
public enum DispatchTransports {
    /// A transport that calls `perform`.
    public static func function(
        _ perform: @escaping @Sendable (HTTPRequestMessage, URL) throws -> HTTPResponseMessage
    ) -> any DispatchTransport {
        FunctionTransport(body: perform)
    }

    /// Hands requests to `handler` in this process (`DispatchSandbox.handle`). A response
    /// marked `dropped` (an injected lost response) surfaces as `.lost`, as a broken
    /// connection would.
    public static func inProcess(
        _ handler: @escaping @Sendable (HTTPRequestMessage) -> HTTPResponseMessage
    ) -> any DispatchTransport {
        FunctionTransport { request, _ in
            let response = handler(request)
            if response.dropped { throw DispatchTransportError(.lost, "the connection closed before the response arrived") }
            return response
        }
    }
}

private struct FunctionTransport: DispatchTransport {
    let body: @Sendable (HTTPRequestMessage, URL) throws -> HTTPResponseMessage
    func perform(_ request: HTTPRequestMessage, baseURL: URL) throws -> HTTPResponseMessage {
        try body(request, baseURL)
    }
}
