import Foundation

/// Reads one HTTP/1.1 response from a connected socket: status line, headers, and a
/// body framed by Content-Length, chunked encoding, or the end of the connection.
///
/// Parsing works on bytes with a read cursor into one receive buffer (no Foundation
/// string calls, no shifting the buffer per line): on loopback this reader is a large
/// part of the client's cost per request.
struct HTTPResponseReader {
    let fd: Int32
    let maxBodyBytes: Int
    /// Receive storage: bytes `start..<end` are received and unread.
    private var storage = [UInt8](repeating: 0, count: 16_384)
    private var start = 0
    private var end = 0
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
        let headEnd = try fill(until: { $0.find(crlfcrlf: true) })
        let (status, http11, headers) = try Self.parseHead(storage[start..<headEnd])
        start = headEnd + 4
        var keepAlive = http11
        if let connection = headers["Connection"] {
            if Self.containsToken(connection, "close") { keepAlive = false }
            if Self.containsToken(connection, "keep-alive") { keepAlive = true }
        }
        let body: [UInt8]
        if isHead || status == 204 || status == 304 || (100..<200).contains(status) {
            body = []
        } else if let coding = headers["Transfer-Encoding"], Self.containsToken(coding, "chunked") {
            body = try readChunked()
        } else if let lengthText = headers["Content-Length"] {
            guard let length = Int(lengthText), length >= 0 else { throw HTTPClientError(.invalidResponse, "bad Content-Length") }
            guard length <= maxBodyBytes else { throw HTTPClientError(.tooLarge, "response body of \(length) bytes exceeds \(maxBodyBytes)") }
            try fill(count: length)
            body = Array(storage[start..<(start + length)])
            start += length
        } else {
            body = try readToEnd()
            keepAlive = false
        }
        return Response(message: HTTPResponseMessage(status: status, headers: headers, body: Data(body)), keepAlive: keepAlive)
    }

    /// Parses the status line and header lines of `head` (without the blank line).
    static func parseHead(_ head: ArraySlice<UInt8>) throws -> (status: Int, http11: Bool, headers: HTTPHeaders) {
        var lines = head.split(separator: 10, omittingEmptySubsequences: false).makeIterator()
        guard let statusLine = lines.next().map(trimmed), statusLine.count >= 12,
              statusLine.starts(with: "HTTP/1.".utf8), statusLine[statusLine.startIndex + 8] == 32,
              let status = Int(String(decoding: statusLine.dropFirst(9).prefix(3), as: UTF8.self)),
              statusLine.count == 12 || statusLine[statusLine.startIndex + 12] == 32
        else {
            let text = String(decoding: head.prefix(80), as: UTF8.self)
            throw HTTPClientError(.invalidResponse, "not an HTTP/1.1 status line: \(text)")
        }
        let http11 = statusLine[statusLine.startIndex + 7] == UInt8(ascii: "1")
        var headers = HTTPHeaders()
        while let raw = lines.next() {
            let line = trimmed(raw)
            if line.isEmpty { continue }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
                throw HTTPClientError(.invalidResponse, "bad header line")
            }
            let value = trimmed(line[(colon + 1)...])
            headers.add(String(decoding: line[..<colon], as: UTF8.self), String(decoding: value, as: UTF8.self))
        }
        return (status, http11, headers)
    }

    /// `bytes` without surrounding spaces, tabs and carriage returns.
    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        func blank(_ b: UInt8) -> Bool { b == 32 || b == 9 || b == 13 }
        var s = bytes.startIndex, e = bytes.endIndex
        while s < e, blank(bytes[s]) { s += 1 }
        while e > s, blank(bytes[e - 1]) { e -= 1 }
        return bytes[s..<e]
    }

    /// Whether the comma-separated header value `value` lists `token` (ASCII case ignored).
    static func containsToken(_ value: String, _ token: String) -> Bool {
        value.split(separator: ",").contains { item in
            HTTPHeaders.namesMatch(String(decoding: trimmed(ArraySlice(item.utf8)), as: UTF8.self), token)
        }
    }

    private mutating func readChunked() throws -> [UInt8] {
        var body = [UInt8]()
        while true {
            let lineEnd = try fill(until: { $0.find(crlfcrlf: false) })
            let sizeField = storage[start..<lineEnd].split(separator: UInt8(ascii: ";"), maxSplits: 1,
                                                          omittingEmptySubsequences: false).first ?? []
            start = lineEnd + 2
            guard let size = Int(String(decoding: Self.trimmed(sizeField), as: UTF8.self), radix: 16), size >= 0 else {
                throw HTTPClientError(.invalidResponse, "bad chunk size")
            }
            if size == 0 {
                let trailerEnd = try fill(until: { $0.find(crlfcrlf: false) })   // no trailers expected
                start = trailerEnd + 2
                return body
            }
            guard body.count + size <= maxBodyBytes else { throw HTTPClientError(.tooLarge, "response body exceeds \(maxBodyBytes) bytes") }
            try fill(count: size + 2)
            body += storage[start..<(start + size)]
            start += size + 2
        }
    }

    private mutating func readToEnd() throws -> [UInt8] {
        while try receive() {
            guard end - start <= maxBodyBytes else { throw HTTPClientError(.tooLarge, "response body exceeds \(maxBodyBytes) bytes") }
        }
        defer { start = end }
        return Array(storage[start..<end])
    }

    /// Receives until at least `count` unread bytes are buffered.
    private mutating func fill(count: Int) throws {
        _ = try fill(until: { $0.unread >= count ? 0 : nil })
    }

    /// Receives until `found` returns a position (an absolute buffer index) in the unread bytes.
    private mutating func fill(until found: (Unread) -> Int?) throws -> Int {
        var searchedUpTo = start
        while true {
            if let position = found(Unread(bytes: storage, start: start, end: end, resumeAt: searchedUpTo)) {
                return position
            }
            searchedUpTo = max(start, end - 3)
            guard end - start <= maxBodyBytes + 65_536 else { throw HTTPClientError(.tooLarge, "response exceeds \(maxBodyBytes) bytes") }
            guard try receive() else {
                throw HTTPClientError(.connectionLost, receivedAny
                    ? "the connection closed in the middle of the response"
                    : "the connection closed before the response")
            }
        }
    }

    /// Reads once into the free tail of `storage` (dropping consumed bytes or growing it
    /// first when the tail is small); false at the end of the stream. A response that
    /// opens with a TLS record (a TLS server's alert) fails with `wrongProtocol`.
    private mutating func receive() throws -> Bool {
        if storage.count - end < 8_192 {
            if start > 0 {
                storage.withUnsafeMutableBytes { raw in
                    raw.baseAddress!.copyMemory(from: raw.baseAddress! + start, byteCount: end - start)
                }
                end -= start
                start = 0
            }
            if storage.count - end < 8_192 { storage.append(contentsOf: repeatElement(0, count: storage.count)) }
        }
        let outcome = storage.withUnsafeMutableBytes { raw in
            Socket.receive(fd, into: UnsafeMutableRawBufferPointer(rebasing: raw[end...]))
        }
        switch outcome {
        case .bytes(let n):
            if !receivedAny && TLSHello.looksLikeTLS(storage[end..<(end + n)]) {
                throw HTTPClientError(.wrongProtocol, "the server answered in TLS, not plain HTTP")
            }
            receivedAny = true
            end += n
            return true
        case .endOfStream: return false
        case .timedOut: throw HTTPClientError(.timedOut, "no response data within the timeout")
        case .failed: throw HTTPClientError(.connectionLost, "the connection failed: \(Socket.errorText(errno))")
        }
    }

    /// The unread part of the buffer, as seen by a `fill(until:)` search.
    struct Unread {
        let bytes: [UInt8]
        let start: Int
        let end: Int
        /// Bytes before this index were already searched without a match.
        let resumeAt: Int

        var unread: Int { end - start }

        /// The index of the first CRLF (or CRLFCRLF) at or after `resumeAt`, or nil.
        func find(crlfcrlf: Bool) -> Int? {
            let width = crlfcrlf ? 4 : 2
            var i = resumeAt
            let last = end - width
            while i <= last {
                if bytes[i] == 13, bytes[i + 1] == 10, !crlfcrlf || (bytes[i + 2] == 13 && bytes[i + 3] == 10) { return i }
                i += 1
            }
            return nil
        }
    }
}
