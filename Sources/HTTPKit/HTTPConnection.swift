import Foundation

/// One accepted connection, served on its own thread by ``run()``.
///
/// Requests are read, handled and answered strictly in order, so pipelined requests
/// get their responses in the order they were sent. The descriptor is closed only
/// when the connection deregisters (``HTTPServer/connectionEnded(_:)``); until then
/// the server may call `shutdown(2)` on it to wake a blocked read.
final class HTTPConnection: @unchecked Sendable {
    /// Whether the connection is between requests. Guarded by the server's lock.
    enum State { case idle, active }

    let fd: Int32
    /// Guarded by the server's lock.
    var state: State = .active

    private let server: HTTPServer
    private let limits: HTTPServerLimits
    private let handler: HTTPServer.Handler
    /// Received bytes not yet consumed by a request.
    private var buffer: [UInt8] = []
    private let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 8)
    /// Buffer storage kept between requests; more is released once a request is consumed.
    private static let retainedCapacity = 256 * 1024

    init(fd: Int32, server: HTTPServer, limits: HTTPServerLimits, handler: @escaping HTTPServer.Handler) {
        self.fd = fd
        self.server = server
        self.limits = limits
        self.handler = handler
    }

    deinit { scratch.deallocate() }

    /// Serves requests until the peer closes, a request is refused, a response asks
    /// to close or is dropped, the idle timeout expires, or the server stops; then
    /// deregisters from the server, which closes the descriptor.
    func run() {
        serve()
        server.connectionEnded(self)
    }

    private func serve() {
        var searchFrom = 0
        while true {
            if buffer.isEmpty {
                guard server.connectionBecameIdle(self), read() == .bytes else { return }
                server.connectionBecameActive(self)
            }
            let outcome = buffer.withUnsafeBufferPointer {
                HTTPRequestParser.parseHead(
                    $0, searchFrom: searchFrom,
                    maxHeaderBytes: limits.maxHeaderBytes, maxBodyBytes: limits.maxBodyBytes)
            }
            switch outcome {
            case .incomplete(let resumeAt):
                searchFrom = resumeAt
                guard readMore() else { return }
            case .failure(let error):
                return refuse(error)
            case .head(let head, let length):
                searchFrom = 0
                guard let body = readBody(of: head, headLength: length), respond(to: head, body: body) else { return }
            }
        }
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
            while buffer.count < total {
                guard readMore() else { return nil }
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

    /// Reads more of a request already begun. On timeout answers 408. Returns false
    /// if the connection must close.
    private func readMore() -> Bool {
        switch read() {
        case .bytes: return true
        case .timedOut: refuse(.timedOut); return false
        case .endOfStream, .failed: return false
        }
    }

    private enum ReadResult { case bytes, endOfStream, timedOut, failed }

    /// Receives once into the buffer.
    private func read() -> ReadResult {
        switch Socket.receive(fd, into: scratch) {
        case .bytes(let n):
            buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[0..<n]))
            return .bytes
        case .endOfStream: return .endOfStream
        case .timedOut: return .timedOut
        case .failed: return .failed
        }
    }

    private func write(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { Socket.sendAll(fd, $0) }
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
