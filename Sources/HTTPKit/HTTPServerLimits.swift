/// Limits an ``HTTPServer`` enforces on every connection.
///
/// Sizes: a request whose head (request line plus header fields, including the blank
/// line that ends them) exceeds `maxHeaderBytes` is answered with 431; one whose
/// declared `Content-Length` exceeds `maxBodyBytes` with 413. Both close the connection.
///
/// Time: a client must finish each request's head within `headerTimeout` and its body
/// at `minBodyBytesPerSecond` after a `bodyTimeout` start, and may stay silent at most
/// `idleTimeout` at a time; a request not received in time is answered 408
/// `request_timeout` and the connection closed. So a client that trickles bytes holds
/// a connection for a bounded time, however steadily it trickles.
///
/// Connections: at most `maxConnectionsPerAddress` from one client address (more are
/// answered 429 `too_many_connections`), and at most `maxConnections` in all. When
/// every slot is taken, a new client still gets in if a connection from an address
/// holding more slots than the new client's has waited at least `evictionAge` for its
/// request (mid-request, or idle between keep-alive requests): of those, the busiest
/// address's longest-waiting one is closed to make room (answered 503 `server_busy`
/// if part of a request had arrived). None is evicted while its handler runs or its
/// response is written. Otherwise the new client is answered 503 `server_busy`. So
/// connections held open by a trickle from a few addresses cannot keep out a client
/// from another, and a client busy with quick requests is never evicted, however many
/// connections it holds.
public struct HTTPServerLimits: Sendable, Equatable {
    /// Largest request head accepted, in bytes. Default 64 KiB.
    public var maxHeaderBytes: Int
    /// Largest request body accepted, in bytes. Default 16 MiB.
    public var maxBodyBytes: Int
    /// Seconds a connection may stay silent: waiting for its next request (keep-alive),
    /// or between two reads of a request begun. Also bounds the writing of each
    /// response. Default 30.
    public var idleTimeout: Double
    /// Seconds within which a request's head must be complete, counted from the
    /// connection's accept for its first request and from the first byte of each later
    /// one. A connection that sent nothing by then is closed without an answer; one
    /// that sent part of a head gets 408. Default 10.
    public var headerTimeout: Double
    /// Seconds the body of a request may take, counted from the end of its head (or
    /// from the `100 Continue` the server sends), extended by one second for every
    /// `minBodyBytesPerSecond` bytes received: a large body on a slow but honest link
    /// keeps its deadline moving; a trickle does not. Default 10.
    public var bodyTimeout: Double
    /// The slowest body rate that keeps extending the body's deadline (bytes a second).
    /// Default 500.
    public var minBodyBytesPerSecond: Int
    /// Connections served at once. Default 256. The server lowers it, if needed, to fit
    /// under the process's open-file limit (`ulimit -n`) with room for the handler's
    /// own files (``HTTPServer/maxConnections`` is the figure in force).
    public var maxConnections: Int
    /// Connections one client address (an IPv4 or IPv6 address; the port is not part
    /// of it) may hold at once; 0 means `maxConnections`. Default 64. Behind a reverse
    /// proxy every connection comes from the proxy's address: raise it to
    /// `maxConnections` there (the proxy is then what limits each client).
    public var maxConnectionsPerAddress: Int
    /// Seconds a connection must have waited for its request before a new client (from
    /// a less busy address) may take its slot when the server is full. Default 1.
    public var evictionAge: Double
    /// Seconds ``HTTPServer/stop()`` waits for in-flight requests before it closes
    /// their connections anyway. Default 5.
    public var shutdownGracePeriod: Double

    public init(
        maxHeaderBytes: Int = 64 * 1024,
        maxBodyBytes: Int = 16 * 1024 * 1024,
        idleTimeout: Double = 30,
        headerTimeout: Double = 10,
        bodyTimeout: Double = 10,
        minBodyBytesPerSecond: Int = 500,
        maxConnections: Int = 256,
        maxConnectionsPerAddress: Int = 64,
        evictionAge: Double = 1,
        shutdownGracePeriod: Double = 5
    ) {
        self.maxHeaderBytes = maxHeaderBytes
        self.maxBodyBytes = maxBodyBytes
        self.idleTimeout = idleTimeout
        self.headerTimeout = headerTimeout
        self.bodyTimeout = bodyTimeout
        self.minBodyBytesPerSecond = minBodyBytesPerSecond
        self.maxConnections = maxConnections
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
        self.evictionAge = evictionAge
        self.shutdownGracePeriod = shutdownGracePeriod
    }

    /// The per-address cap in force: `maxConnectionsPerAddress`, or `maxConnections`
    /// when it is 0 or larger.
    var effectivePerAddress: Int {
        maxConnectionsPerAddress <= 0 ? maxConnections : min(maxConnectionsPerAddress, maxConnections)
    }
}
