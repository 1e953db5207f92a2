import Foundation
import HTTPKit

/// Moves one HTTP exchange to a Dispatch server: returns whatever response arrived (any
/// status) or throws when none did — an `HTTPClientError` whose kind says whether the
/// request may have been processed (any other error counts as `connectionLost`). The
/// client retries `cannotConnect`, `connectionLost`, `timedOut` and `invalidResponse`
/// with the same Idempotency-Key, and gives up at once on `tooLarge`, `notLoopback` and
/// `wrongProtocol`.
/// The transport owns sockets, TLS, timeouts and the `Host` header.
///
/// The composition layer passes the Hub client's live transport (HTTPS, or plain HTTP
/// to loopback) or an in-process `DispatchSandbox` (`DispatchTransports.inProcess`).
public protocol DispatchTransport: Sendable {
    func perform(_ request: HTTPRequestMessage, baseURL: URL) throws -> HTTPResponseMessage
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
    /// marked `dropped` (an injected lost response) surfaces as `connectionLost`, as a
    /// broken connection would.
    public static func inProcess(
        _ handler: @escaping @Sendable (HTTPRequestMessage) -> HTTPResponseMessage
    ) -> any DispatchTransport {
        FunctionTransport { request, _ in
            let response = handler(request)
            if response.dropped { throw HTTPClientError(.connectionLost, "the connection closed before the response arrived") }
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
