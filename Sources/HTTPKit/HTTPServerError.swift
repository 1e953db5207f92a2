/// An error from setting up an ``HTTPServer``.
///
/// `code` is extensible (new codes do not break callers that switch over known ones);
/// `message` says what went wrong and how to fix it.
public struct HTTPServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable, machine-readable identifier of the kind of failure.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The host is not a loopback address; the server only listens on loopback.
        public static let nonLoopbackHost = Code(rawValue: "non_loopback_host")
        /// A socket could not be created or configured.
        public static let socketFailed = Code(rawValue: "socket_failed")
        /// The address could not be bound (for example, the port is in use).
        public static let bindFailed = Code(rawValue: "bind_failed")
        /// The bound socket could not start listening.
        public static let listenFailed = Code(rawValue: "listen_failed")
    }

    public var code: Code
    public var message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    /// A host given to listen beyond loopback that is not an IP address literal.
    static func notALiteral(_ host: String) -> HTTPServerError {
        HTTPServerError(
            code: .nonLoopbackHost,
            message: "cannot listen on \"\(host)\": give an IP address, not a name "
                + "(0.0.0.0 or :: for every interface, or one of this host's addresses)")
    }

    static func nonLoopback(_ host: String) -> HTTPServerError {
        HTTPServerError(
            code: .nonLoopbackHost,
            message: "refusing to listen on \"\(host)\": the HTTP server binds only to loopback; "
                + "use 127.0.0.1, ::1 or localhost")
    }
}
