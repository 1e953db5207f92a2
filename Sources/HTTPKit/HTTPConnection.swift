import Foundation

/// One accepted connection, served on its own thread by ``run()``.
///
/// Requests are read, handled and answered strictly in order, so pipelined requests
/// get their responses in the order they were sent. Each request's head must arrive
/// within `headerTimeout` (from the accept for the first request, from its first byte
/// for later ones) and its body within `bodyTimeout` plus a second per
/// `minBodyBytesPerSecond` bytes; no silence may last longer than `idleTimeout`.
/// The descriptor is closed only when the connection deregisters
/// (``HTTPServer/connectionEnded(_:)``); until then the server may call `shutdown(2)`
/// on it to wake a blocked read (at stop, or to evict it).
final class HTTPConnection: @unchecked Sendable {
    /// Whether the connection is between requests. Guarded by the server's lock.
    enum State { case idle, active }

    let fd: Int32
    /// The client's address, the key of the per-address cap.
    let peer: String
    /// Guarded by the server's lock.
    var state: State = .active
    /// Since when the connection has been waiting for (or receiving) its current
    /// request; nil while its handler runs or its response is written. Only a waiting
    /// connection can be evicted. Guarded by the server's lock.
    var waitingSince: ContinuousClock.Instant? = .now
    /// Whether the server took this connection's slot for another client. Guarded by
    /// the server's lock.
    var evicted = false

    private let server: HTTPServer
    private let limits: HTTPServerLimits
    private let handler: HTTPServer.Handler
    /// Received bytes not yet consumed by a request.
    private var buffer: [UInt8] = []
    private let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 8)
    /// Buffer storage kept between requests; more is released once a request is consumed.
    private static let retainedCapacity = 256 * 1024

    private let acceptedAt = ContinuousClock.now

    init(fd: Int32, peer: String, server: HTTPServer, limits: HTTPServerLimits, handler: @escaping HTTPServer.Handler) {
        self.fd = fd
        self.peer = peer
        self.server = server
        self.limits = limits
        self.handler = handler
    }

    deinit { scratch.deallocate() }

    /// Serves requests until the peer closes, a request is refused, a response asks
    /// to close or is dropped, a deadline passes, the connection is evicted or the
    /// server stops; then deregisters from the server, which closes the descriptor.
    func run() {
        serve()
        server.connectionEnded(self)
    }

    /// Answers 503 and deregisters a connection whose thread could not be started.
    func refuseUnstarted() {
        _ = write(HTTPResponseEncoder.encode(HTTPRequestError.serverBusy.response, keepAlive: false, minorVersion: 1))
        Socket.shutdownWrite(fd)
        server.connectionEnded(self)
    }

    private func serve() {
        var searchFrom = 0
        var isFirstRequest = true
        while true {
            // The head's deadline: from the accept for the first request, else from the
            // request's first byte (now, if it is already buffered).
            let headDeadline = isFirstRequest ? acceptedAt + .seconds(limits.headerTimeout) : nil
            if buffer.isEmpty {
                guard server.connectionBecameIdle(self), read(until: headDeadline) == .bytes else { return endQuietly() }
                server.connectionBecameActive(self)
            } else {
                server.connectionBecameActive(self)
            }
            let deadline = headDeadline ?? .now + .seconds(limits.headerTimeout)
            isFirstRequest = false
            var head: (HTTPRequestHead, Int)?
            while head == nil {
                let outcome = buffer.withUnsafeBufferPointer {
                    HTTPRequestParser.parseHead(
                        $0, searchFrom: searchFrom,
                        maxHeaderBytes: limits.maxHeaderBytes, maxBodyBytes: limits.maxBodyBytes)
                }
                switch outcome {
                case .incomplete(let resumeAt):
                    searchFrom = resumeAt
                    guard readMore(until: deadline) else { return }
                case .failure(let error):
                    return refuse(error)
                case .head(let parsed, let length):
                    head = (parsed, length)
                }
            }
            searchFrom = 0
            guard let (parsed, length) = head, let body = readBody(of: parsed, headLength: length) else { return }
            guard server.connectionWillHandle(self) else { return refuse(.evicted) }
            guard respond(to: parsed, body: body) else { return }
        }
    }

    /// The connection ended between requests (closed, silent too long, server
    /// stopping, or evicted): nothing to answer, unless it was evicted with part of a
    /// request received.
    private func endQuietly() {
        if !buffer.isEmpty, server.wasEvicted(self) { refuse(.evicted) }
    }

    /// Reads the body that follows a head of `headLength` bytes and removes both from
    /// the buffer. Returns nil if the connection must close.
    private func readBody(of head: HTTPRequestHead, headLength: Int) -> Data? {
        let total = headLength + head.contentLength
        if buffer.count < total {
            if head.expectsContinue {
                guard write(HTTPResponseEncoder.continueResponse) else { return nil }
            }
            buffer.reserveCapacity(total)
            // The body's deadline moves a second later for every minBodyBytesPerSecond
            // bytes received: an honest slow link keeps up, a trickle does not.
            let start = ContinuousClock.now + .seconds(limits.bodyTimeout)
            let rate = Double(max(1, limits.minBodyBytesPerSecond))
            while buffer.count < total {
                let received = Double(buffer.count - headLength)
                guard readMore(until: start + .seconds(received / rate)) else { return nil }
            }
        }
        let body = Data(buffer[headLength..<total])
        if buffer.capacity > Self.retainedCapacity {
            buffer = Array(buffer[total...])  // do not keep a large body's storage
        } else {
            buffer.removeSubrange(0..<total)
        }
        return body
    }

    /// Calls the handler and writes its response. Returns false if the connection must close.
    private func respond(to head: HTTPRequestHead, body: Data) -> Bool {
        let request = HTTPRequestMessage(method: head.method, target: head.target, headers: head.headers, body: body)
        let response = handler(request)
        if response.dropped {
            Socket.shutdownBoth(fd)
            return false
        }
        let keepAlive = head.keepAlive && !HTTPResponseEncoder.asksToClose(response) && !server.isStopping
        let bytes = HTTPResponseEncoder.encode(
            response, keepAlive: keepAlive, minorVersion: head.minorVersion, headOnly: head.method == "HEAD")
        guard write(bytes) else { return false }
        if !keepAlive { closeGracefully() }
        return keepAlive
    }

    /// Answers a refused request with its JSON error and closes.
    private func refuse(_ error: HTTPRequestError) {
        if write(HTTPResponseEncoder.encode(error.response, keepAlive: false, minorVersion: 1)) {
            closeGracefully()
        }
    }

    /// Reads more of a request already begun. Past `deadline`, or after `idleTimeout`
    /// of silence, answers 408; evicted, answers 503. Returns false if the connection
    /// must close.
    private func readMore(until deadline: ContinuousClock.Instant) -> Bool {
        switch read(until: deadline) {
        case .bytes: return true
        case .timedOut: refuse(.timedOut); return false
        case .endOfStream, .failed:
            if server.wasEvicted(self) { refuse(.evicted) }
            return false
        }
    }

    private enum ReadResult { case bytes, endOfStream, timedOut, failed }

    /// Receives once into the buffer, waiting at most `idleTimeout` and never past
    /// `deadline`.
    private func read(until deadline: ContinuousClock.Instant?) -> ReadResult {
        var wait = limits.idleTimeout
        if let deadline {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return .timedOut }
            wait = min(wait, Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18)
        }
        Socket.setReceiveTimeout(fd, wait)
        switch Socket.receive(fd, into: scratch) {
        case .bytes(let n):
            buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[0..<n]))
            return .bytes
        case .endOfStream: return .endOfStream
        case .timedOut: return .timedOut
        case .failed: return .failed
        }
    }

    /// Writes `bytes` within `idleTimeout` in all.
    private func write(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { Socket.sendAll(fd, $0, within: limits.idleTimeout) }
    }

    /// Sends FIN, then reads and discards what the client still sends (for at most
    /// two seconds and the largest request the limits allow), so that closing with
    /// unread data does not reset the connection before the client has read the
    /// response.
    private func closeGracefully() {
        Socket.shutdownWrite(fd)
        Socket.setTimeout(fd, min(limits.idleTimeout, 0.5))
        let deadline = ContinuousClock.now + .seconds(2)
        var budget = limits.maxHeaderBytes + limits.maxBodyBytes
        while budget > 0, ContinuousClock.now < deadline, case .bytes(let n) = Socket.receive(fd, into: scratch) {
            budget -= n
        }
    }
}
