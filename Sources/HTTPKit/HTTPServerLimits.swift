/// Limits an ``HTTPServer`` enforces on every connection.
///
/// A request whose head (request line plus header fields, including the blank line
/// that ends them) exceeds `maxHeaderBytes` is answered with 431; one whose declared
/// `Content-Length` exceeds `maxBodyBytes` with 413. Both close the connection.
public struct HTTPServerLimits: Sendable, Equatable {
    /// Largest request head accepted, in bytes. Default 64 KiB.
    public var maxHeaderBytes: Int
    /// Largest request body accepted, in bytes. Default 16 MiB.
    public var maxBodyBytes: Int
    /// Seconds a connection may wait for the next request, or for the rest of a
    /// partly received one, before the server closes it. Also bounds each blocked
    /// write. Default 30.
    public var idleTimeout: Double
    /// Connections served at once. A connection accepted beyond this is answered
    /// with 503 `server_busy` and closed. Default 256.
    public var maxConnections: Int
    /// Seconds ``HTTPServer/stop()`` waits for in-flight requests before it closes
    /// their connections anyway. Default 5.
    public var shutdownGracePeriod: Double

    public init(
        maxHeaderBytes: Int = 64 * 1024,
        maxBodyBytes: Int = 16 * 1024 * 1024,
        idleTimeout: Double = 30,
        maxConnections: Int = 256,
        shutdownGracePeriod: Double = 5
    ) {
        self.maxHeaderBytes = maxHeaderBytes
        self.maxBodyBytes = maxBodyBytes
        self.idleTimeout = idleTimeout
        self.maxConnections = maxConnections
        self.shutdownGracePeriod = shutdownGracePeriod
    }
}
