import Foundation
import XCTest
@testable import HTTPKit
#if canImport(Glibc)
import Glibc
#endif

/// A blocking TCP client over a raw socket, for tests that need exact control of
/// the bytes on the wire (pipelining, malformed requests, closed connections).
/// Sendable so a test can hand one to a thread; use each from one thread at a time.
final class RawClient: @unchecked Sendable {
    let fd: Int32

    /// Connects to 127.0.0.1:`port` from the loopback address `source` (127.0.0.1
    /// unless a test needs several client addresses) with a receive timeout of
    /// `timeout` seconds.
    init(port: UInt16, from source: String = "127.0.0.1", timeout: Double = 5) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if source != "127.0.0.1" {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            _ = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let ok = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard ok == 0 else {
            close(fd)
            throw NSError(domain: "RawClient", code: Int(errno))
        }
        var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    func send(_ text: String) { send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { return }
            offset += n
        }
    }

    private var pending: [UInt8] = []

    /// What one `recv` produced: bytes, end of stream (0), or an error (timeout, reset).
    enum Chunk: Equatable { case bytes([UInt8]), closed, error(Int32) }

    func receiveChunk() -> Chunk {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n > 0 { return .bytes(Array(buffer[0..<n])) }
        return n == 0 ? .closed : .error(errno)
    }

    /// Reads one response (head plus `Content-Length` body, or the head alone if
    /// `toHEAD`) and returns it as text; nil if the connection ended first.
    func readResponse(toHEAD: Bool = false) -> String? {
        while true {
            if let end = headEnd(), let head = String(bytes: pending[0..<end], encoding: .utf8) {
                let length = head.split(separator: "\r\n").compactMap { line -> Int? in
                    let parts = line.split(separator: ":", maxSplits: 1)
                    guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
                    return Int(parts[1].trimmingCharacters(in: .whitespaces))
                }.first ?? 0
                let bodyLength = head.hasPrefix("HTTP/1.1 1") || toHEAD ? 0 : length
                if pending.count >= end + bodyLength {
                    let response = String(decoding: pending[0..<(end + bodyLength)], as: UTF8.self)
                    pending.removeFirst(end + bodyLength)
                    return response
                }
            }
            guard case .bytes(let bytes) = receiveChunk() else { return nil }
            pending += bytes
        }
    }

    /// Reads until the peer closes; returns everything read, and whether it closed
    /// (false on timeout).
    func readToEnd() -> (text: String, closed: Bool) {
        while true {
            switch receiveChunk() {
            case .bytes(let bytes): pending += bytes
            case .closed, .error(ECONNRESET):
                defer { pending = [] }
                return (String(decoding: pending, as: UTF8.self), true)
            case .error:
                defer { pending = [] }
                return (String(decoding: pending, as: UTF8.self), false)
            }
        }
    }

    private func headEnd() -> Int? {
        guard pending.count >= 4 else { return nil }
        for i in 0...(pending.count - 4)
        where pending[i] == 13 && pending[i + 1] == 10 && pending[i + 2] == 13 && pending[i + 3] == 10 {
            return i + 4
        }
        return nil
    }
}

/// Records the requests a handler saw, across threads.
final class RequestRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [HTTPRequestMessage] = []

    func record(_ request: HTTPRequestMessage) {
        lock.lock()
        stored.append(request)
        lock.unlock()
    }

    var requests: [HTTPRequestMessage] {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }
}

/// A handler that records each request and answers 200 with `X-Method`, `X-Target`
/// and a text body "METHOD TARGET\n" followed by the request body.
func echoHandler(_ recorder: RequestRecorder = RequestRecorder()) -> HTTPServer.Handler {
    return { request in
        recorder.record(request)
        var body = Data("\(request.method) \(request.target)\n".utf8)
        body.append(request.body)
        return HTTPResponseMessage(
            status: 200,
            headers: ["Content-Type": "text/plain", "X-Method": request.method, "X-Target": request.target],
            body: body)
    }
}

/// The exact text of an echo response.
func echoResponse(_ method: String, _ target: String, body: String = "", close: Bool = false) -> String {
    let text = "\(method) \(target)\n\(body)"
    return "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Method: \(method)\r\nX-Target: \(target)\r\n"
        + "Content-Length: \(text.utf8.count)\r\n" + (close ? "Connection: close\r\n" : "") + "\r\n" + text
}

/// Starts a server on an ephemeral loopback port and stops it when the test ends.
func startServer(
    _ test: XCTestCase, limits: HTTPServerLimits = .init(), handler: @escaping HTTPServer.Handler
) throws -> HTTPServer {
    let server = try HTTPServer(port: 0, limits: limits, handler: handler)
    server.start()
    test.addTeardownBlock { server.stop() }
    return server
}

/// The number of descriptors this process has open: every descriptor number below the
/// soft `RLIMIT_NOFILE` (at most 65,536) that `fcntl(F_GETFD)` accepts. Works without
/// /proc (macOS too), so a leak check cannot pass because the count was unavailable.
func openDescriptorCount() -> Int {
    var limit = rlimit()
    #if os(Linux)
    let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    let resource = RLIMIT_NOFILE
    #endif
    let top = getrlimit(resource, &limit) == 0 ? Int32(clamping: min(limit.rlim_cur, 65_536)) : 1_024
    var open = 0
    for fd in 0..<top where fcntl(fd, F_GETFD) != -1 { open += 1 }
    return open
}

/// Runs `/usr/bin/curl --silent --show-error --include --max-time 5` with `arguments`
/// and returns its exit status and standard output.
func runCurl(_ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    process.arguments = ["--silent", "--show-error", "--include", "--max-time", "5"] + arguments
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}
