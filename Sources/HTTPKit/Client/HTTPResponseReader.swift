import Foundation

/// Reads one HTTP/1.1 response from a connected socket: status line, headers, and a
/// body framed by Content-Length, chunked encoding, or the end of the connection.
struct HTTPResponseReader {
    let fd: Int32
    let maxBodyBytes: Int
    /// Bytes read past the previous response (pipelining is not used, so normally empty).
    private var buffer = [UInt8]()
    /// True once any byte of this response arrived (so a failure is "lost", not "stale").
    private(set) var receivedAny = false

    init(fd: Int32, maxBodyBytes: Int) {
        self.fd = fd
        self.maxBodyBytes = maxBodyBytes
    }

    struct Response {
        var message: HTTPResponseMessage
        /// Whether the connection may carry another request.
        var keepAlive: Bool
    }

    mutating func read(isHead: Bool) throws -> Response {
        let headEnd = try fill(until: { $0.firstRange(of: [13, 10, 13, 10]) })
        let head = String(decoding: buffer[..<headEnd.lowerBound], as: UTF8.self)
        buffer.removeSubrange(..<headEnd.upperBound)
        var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            throw HTTPClientError(.invalidResponse, "not an HTTP/1.1 status line: \(statusLine.prefix(80))")
        }
        var headers = HTTPHeaders()
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { throw HTTPClientError(.invalidResponse, "bad header line") }
            headers.add(String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var keepAlive = parts[0] == "HTTP/1.1"
        if let connection = headers["Connection"]?.lowercased() {
            if connection.contains("close") { keepAlive = false }
            if connection.contains("keep-alive") { keepAlive = true }
        }
        let body: [UInt8]
        if isHead || status == 204 || status == 304 || (100..<200).contains(status) {
            body = []
        } else if headers["Transfer-Encoding"]?.lowercased().contains("chunked") == true {
            body = try readChunked()
        } else if let lengthText = headers["Content-Length"] {
            guard let length = Int(lengthText), length >= 0 else { throw HTTPClientError(.invalidResponse, "bad Content-Length") }
            guard length <= maxBodyBytes else { throw HTTPClientError(.tooLarge, "response body of \(length) bytes exceeds \(maxBodyBytes)") }
            _ = try fill(until: { $0.count >= length ? length..<length : nil })
            body = Array(buffer[..<length])
            buffer.removeSubrange(..<length)
        } else {
            body = try readToEnd()
            keepAlive = false
        }
        return Response(message: HTTPResponseMessage(status: status, headers: headers, body: Data(body)), keepAlive: keepAlive)
    }

    private mutating func readChunked() throws -> [UInt8] {
        var body = [UInt8]()
        while true {
            let lineEnd = try fill(until: { $0.firstRange(of: [13, 10]) })
            let sizeText = String(decoding: buffer[..<lineEnd.lowerBound], as: UTF8.self).split(separator: ";").first ?? ""
            buffer.removeSubrange(..<lineEnd.upperBound)
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else {
                throw HTTPClientError(.invalidResponse, "bad chunk size")
            }
            if size == 0 {
                _ = try fill(until: { $0.firstRange(of: [13, 10]) })   // trailer end (no trailers expected)
                if let end = buffer.firstRange(of: [13, 10]) { buffer.removeSubrange(..<end.upperBound) }
                return body
            }
            guard body.count + size <= maxBodyBytes else { throw HTTPClientError(.tooLarge, "response body exceeds \(maxBodyBytes) bytes") }
            _ = try fill(until: { $0.count >= size + 2 ? 0..<0 : nil })
            body += buffer[..<size]
            buffer.removeSubrange(..<(size + 2))
        }
    }

    private mutating func readToEnd() throws -> [UInt8] {
        while try receive() {
            guard buffer.count <= maxBodyBytes else { throw HTTPClientError(.tooLarge, "response body exceeds \(maxBodyBytes) bytes") }
        }
        defer { buffer.removeAll() }
        return buffer
    }

    /// Receives until `found` returns a range over the buffer.
    private mutating func fill(until found: ([UInt8]) -> Range<Int>?) throws -> Range<Int> {
        while true {
            if let range = found(buffer) { return range }
            guard buffer.count <= maxBodyBytes + 65_536 else { throw HTTPClientError(.tooLarge, "response exceeds \(maxBodyBytes) bytes") }
            guard try receive() else {
                throw HTTPClientError(.connectionLost, receivedAny
                    ? "the connection closed in the middle of the response"
                    : "the connection closed before the response")
            }
        }
    }

    /// Reads once; false at the end of the stream.
    private mutating func receive() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let outcome = chunk.withUnsafeMutableBytes { Socket.receive(fd, into: $0) }
        switch outcome {
        case .bytes(let n):
            receivedAny = true
            buffer += chunk[..<n]
            return true
        case .endOfStream: return false
        case .timedOut: throw HTTPClientError(.timedOut, "no response data within the timeout")
        case .failed: throw HTTPClientError(.connectionLost, "the connection failed: \(Socket.errorText(errno))")
        }
    }
}
