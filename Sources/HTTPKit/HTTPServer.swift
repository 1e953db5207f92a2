import Foundation

/// A small HTTP/1.1 server that listens on loopback only, unless its creator asks for
/// more (`beyondLoopback`: `hubscript listen --bind` behind a reverse proxy).
///
/// Each connection is served on its own thread, so a handler may block (for example
/// to inject latency) without holding up other connections. Connections are kept
/// alive between requests (HTTP/1.1 by default, HTTP/1.0 with `Connection:
/// keep-alive`) and pipelined requests are answered in order. Request bodies must be
/// framed by `Content-Length`.
///
/// The handler sees the method, the target and the header fields exactly as sent
/// (names in their original case and order). Each response is written with its
/// status line and reason phrase, the handler's header fields, `Content-Length`, and
/// `Connection: close` when the connection will close. A HEAD request gets the head
/// only. `Expect: 100-continue` gets an interim 100 response.
///
/// Refused requests get a JSON error body `{"error":{"code":"…","message":"…"}}` and
/// the connection is closed: malformed → 400 `invalid_request`, head too large → 431
/// `header_too_large`, body too large → 413 `payload_too_large`, `Transfer-Encoding`
/// → 411 `length_required`, other `Expect` → 417 `expectation_failed`, HTTP/2+
/// request line → 505 `http_version_not_supported`, a request not received within its
/// deadlines (``HTTPServerLimits``) → 408 `request_timeout`, a connection beyond
/// `maxConnectionsPerAddress` → 429 `too_many_connections`, a connection beyond
/// `maxConnections` that no long-waiting connection of a busier address can make
/// room for → 503 `server_busy` (as is the evicted connection, if it had sent part
/// of a request). Both carry `Retry-After: 1`. A response with `dropped == true` is
/// not written: the connection is closed instead, with no bytes sent.
///
/// Lifecycle: `init` binds, ``start()`` accepts, ``stop()`` shuts down; the server
/// cannot be restarted. Do not call ``stop()`` from inside a handler (it would wait
/// for that handler's own request until the grace period expires).
public final class HTTPServer: @unchecked Sendable {
    /// Answers one request. Called on the connection's thread; may block.
    public typealias Handler = @Sendable (HTTPRequestMessage) -> HTTPResponseMessage

    private enum State { case ready, running, stopping, stopped }

    /// The port the server is bound to (the ephemeral one if `init` was given 0).
    public let port: UInt16
    /// The host the server was created with.
    public let host: String
    public let limits: HTTPServerLimits
    /// The connections served at once: `limits.maxConnections`, lowered if needed to fit
    /// under the open-file limit (`ulimit -n`) with 64 descriptors to spare.
    public let maxConnections: Int

    let handler: Handler
    /// Guards every `var` below and each connection's `state`, `waitingSince` and
    /// `evicted`; signalled whenever `state`, `acceptLoopRunning` or `connections` change.
    let condition = NSCondition()
    private var state = State.ready
    private var acceptLoopRunning = false
    private var listenFD: Int32
    private var wakeFDs: (read: Int32, write: Int32)
    /// Every registered connection, evicted ones included until their thread ends.
    var connections: [ObjectIdentifier: HTTPConnection] = [:]
    /// Connections holding a slot (registered and not evicted), per client address.
    var slotsByAddress: [String: Int] = [:]
    /// Connections holding a slot, in all.
    var slotsInUse = 0
    /// A descriptor kept open so that, out of descriptors, the server can still accept
    /// and refuse one pending connection (accept loop only).
    private var spareFD: Int32 = -1

    /// Binds at once.
    ///
    /// - Parameters:
    ///   - host: a loopback address: "127.0.0.1" (or another 127.x.y.z), "::1" or
    ///     "localhost" (bound as 127.0.0.1). Anything else throws
    ///     ``HTTPServerError/Code/nonLoopbackHost``.
    ///   - port: the port to bind, or 0 for an ephemeral one (read it back from ``port``).
    ///   - beyondLoopback: accept any IPv4 or IPv6 literal as `host` ("0.0.0.0", "::",
    ///     an interface's address); a name that would need DNS still throws.
    /// - Throws: ``HTTPServerError`` if the host is not loopback (or, with
    ///   `beyondLoopback`, not a literal) or the socket cannot be bound (for example,
    ///   the port is in use).
    public init(
        host: String = "127.0.0.1", port: UInt16 = 0, limits: HTTPServerLimits = .init(),
        beyondLoopback: Bool = false, handler: @escaping Handler
    ) throws {
        let resolved = beyondLoopback ? Socket.anyLiteral(host) : Socket.loopback(host)
        guard let address = resolved else {
            throw beyondLoopback ? HTTPServerError.notALiteral(host) : HTTPServerError.nonLoopback(host)
        }
        let listener = try Socket.listen(on: address, host: host, port: port, backlog: 512)
        do {
            wakeFDs = try Socket.makePipe()
        } catch {
            Socket.close(listener.fd)
            throw error
        }
        self.listenFD = listener.fd
        self.port = listener.port
        self.host = host
        self.limits = limits
        self.maxConnections = Self.connectionsFitting(limits.maxConnections)
        self.handler = handler
        self.spareFD = Socket.openSpareDescriptor()
    }

    /// `wanted`, or fewer if the open-file limit leaves less room (64 descriptors kept
    /// for the handler's own files); at least 1.
    static func connectionsFitting(_ wanted: Int) -> Int {
        guard let soft = Socket.descriptorLimits()?.soft else { return max(1, wanted) }
        return max(1, min(wanted, soft - 64))
    }

    /// Raises this process's soft open-file limit (`ulimit -n`) toward its hard limit,
    /// so that `servers` servers with `limits` fit with room to spare. Returns the soft
    /// limit in force afterwards (nil if unknown). Call it before creating the servers.
    @discardableResult
    public static func raiseDescriptorLimit(toServe servers: Int, with limits: HTTPServerLimits) -> Int? {
        Socket.raiseDescriptorLimit(to: servers * limits.maxConnections + 256)
    }

    deinit {
        closeListener()
    }

    /// Begins accepting connections on a background thread and returns at once.
    /// Does nothing if the server was already started or stopped.
    public func start() {
        condition.lock()
        defer { condition.unlock() }
        guard state == .ready else { return }
        state = .running
        acceptLoopRunning = true
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "HTTPServer.accept"
        thread.start()
    }

    /// Stops accepting, lets in-flight requests finish for up to
    /// ``HTTPServerLimits/shutdownGracePeriod`` seconds, then closes every connection
    /// (a handler that is still running keeps its thread until it returns, but its
    /// response is not delivered). Idle keep-alive connections are closed at once and
    /// responses written during shutdown carry `Connection: close`.
    ///
    /// Idempotent and thread-safe: a concurrent or later call returns once the first
    /// has finished. Safe to call from a signal `DispatchSource` handler.
    public func stop() {
        condition.lock()
        defer { condition.unlock() }
        switch state {
        case .ready:
            state = .stopped
            closeListener()
            condition.broadcast()
            return
        case .stopping:
            while state != .stopped { condition.wait() }
            return
        case .stopped:
            return
        case .running:
            state = .stopping
        }
        Socket.signal(wakeFDs.write)
        while acceptLoopRunning { condition.wait() }
        closeListener()

        for connection in connections.values where connection.state == .idle {
            Socket.shutdownBoth(connection.fd)
        }
        waitForConnections(seconds: limits.shutdownGracePeriod)
        for connection in connections.values {
            Socket.shutdownBoth(connection.fd)
        }
        waitForConnections(seconds: 1)

        state = .stopped
        condition.broadcast()
    }

    /// Blocks until ``stop()`` has completed.
    public func waitUntilStopped() {
        condition.lock()
        defer { condition.unlock() }
        while state != .stopped { condition.wait() }
    }

    /// The number of connections currently open.
    public var openConnectionCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return connections.count
    }

    // MARK: - Accepting

    private func acceptLoop() {
        while !Socket.waitForListener(listenFD, orWake: wakeFDs.read) {
            switch Socket.accept(listenFD) {
            case .connection(let fd, let peer): admit(fd, peer: peer)
            case .retry: continue
            case .outOfDescriptors: refuseWithSpareDescriptor()
            case .backOff: Thread.sleep(forTimeInterval: 0.01)
            }
        }
        condition.lock()
        acceptLoopRunning = false
        condition.broadcast()
        condition.unlock()
    }

    /// Out of descriptors: gives up the spare one to accept a pending connection and
    /// answer it 503, so the client hears "busy" instead of waiting in the backlog and
    /// the accept loop does not spin on a listener that stays readable. Without a spare
    /// (it could not be opened again), it pauses 50 ms before polling again.
    private func refuseWithSpareDescriptor() {
        guard spareFD >= 0 else {
            Thread.sleep(forTimeInterval: 0.05)
            spareFD = Socket.openSpareDescriptor()
            return
        }
        Socket.close(spareFD)
        spareFD = -1
        if case .connection(let fd, _) = Socket.accept(listenFD) {
            refuse(fd, with: .serverBusy)
        } else {
            Thread.sleep(forTimeInterval: 0.05)
        }
        spareFD = Socket.openSpareDescriptor()
    }

    // MARK: - Called by connections

    /// Marks `connection` idle between requests (and waiting, so it may be evicted).
    /// Returns false if the server is stopping or the connection was evicted, in which
    /// case the connection must close.
    func connectionBecameIdle(_ connection: HTTPConnection) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard state == .running, !connection.evicted else { return false }
        connection.state = .idle
        if connection.waitingSince == nil { connection.waitingSince = .now }
        return true
    }

    /// Marks `connection` busy receiving a request (still waiting for it, so it may be
    /// evicted).
    func connectionBecameActive(_ connection: HTTPConnection) {
        condition.lock()
        connection.state = .active
        if connection.waitingSince == nil { connection.waitingSince = .now }
        condition.unlock()
    }

    /// Whether ``stop()`` has begun.
    var isStopping: Bool {
        condition.lock()
        defer { condition.unlock() }
        return state != .running
    }

    /// Whether the server is accepting (call with the lock held).
    var isRunningLocked: Bool { state == .running }

    // MARK: - Helpers (call with the lock held, or from deinit)

    private func waitForConnections(seconds: Double) {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while !connections.isEmpty {
            if !condition.wait(until: deadline) { break }
        }
    }

    private func closeListener() {
        for fd in [listenFD, wakeFDs.read, wakeFDs.write, spareFD] where fd >= 0 { Socket.close(fd) }
        listenFD = -1
        wakeFDs = (-1, -1)
        spareFD = -1
    }
}

extension HTTPServer {
    /// Whether `host` is an IPv4 or IPv6 literal (or "localhost") the server could bind
    /// with `beyondLoopback` — no DNS is ever consulted.
    public static func isAddressLiteral(_ host: String) -> Bool { Socket.anyLiteral(host) != nil }
}
