/// Why `LoopbackHTTPClient` got no usable response.
public struct HTTPClientError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable {
        /// Nothing was sent: the connection could not be made.
        case cannotConnect
        /// The connection broke after the request went out: it may have been processed.
        case connectionLost
        /// No bytes arrived within the timeout (it may have been processed).
        case timedOut
        /// The response body exceeded the byte limit.
        case tooLarge
        /// The bytes that came back are not an HTTP/1.1 response.
        case invalidResponse
        /// The host is not a loopback address.
        case notLoopback
        /// The server speaks another protocol than the URL's scheme says: plain HTTP
        /// where TLS was expected, or TLS where plain HTTP was. Nothing was processed, and
        /// trying again cannot help.
        case wrongProtocol
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
