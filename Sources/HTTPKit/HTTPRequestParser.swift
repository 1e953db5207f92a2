/// The request line and header fields of one request, as parsed from the wire.
struct HTTPRequestHead: Equatable, Sendable {
    var method: String
    /// The request target exactly as written on the request line.
    var target: String
    /// The minor version of HTTP/1.x (0 or 1; higher minors are treated as 1).
    var minorVersion: Int
    /// Header fields exactly as received: names as sent, values without the
    /// surrounding whitespace.
    var headers: HTTPHeaders
    var contentLength: Int
    /// Whether the client allows the connection to stay open after this request:
    /// HTTP/1.1 unless `Connection: close`; HTTP/1.0 only with `Connection: keep-alive`.
    var keepAlive: Bool
    /// `Expect: 100-continue` on an HTTP/1.1 request.
    var expectsContinue: Bool
}

/// Parses request heads from a byte buffer. Pure: no I/O, no state.
///
/// Accepts what RFC 9112 requires of a server, strictly: CRLF line endings, one SP
/// between the parts of the request line, token header names with no whitespace
/// before the colon, no obsolete line folding. Empty lines before a request line are
/// skipped. Bodies must be framed with `Content-Length`; `Transfer-Encoding` is refused.
enum HTTPRequestParser {
    enum Outcome: Equatable {
        /// The head is not complete yet; call again with more bytes, passing
        /// `resumeAt` as `searchFrom`.
        case incomplete(resumeAt: Int)
        /// A complete head occupying the first `length` bytes of the buffer.
        case head(HTTPRequestHead, length: Int)
        /// The request must be refused.
        case failure(HTTPRequestError)
    }

    /// Parses the head at the start of `bytes`. A TLS handshake (a client that took
    /// this plain-HTTP server for HTTPS) fails at its first byte, without waiting for more.
    ///
    /// - Parameters:
    ///   - searchFrom: where to resume looking for the blank line that ends the head;
    ///     0, or the `resumeAt` of the previous `.incomplete` on the same buffer.
    ///   - maxHeaderBytes: a head longer than this fails with 431.
    ///   - maxBodyBytes: a declared `Content-Length` above this fails with 413.
    static func parseHead(
        _ bytes: UnsafeBufferPointer<UInt8>, searchFrom: Int = 0, maxHeaderBytes: Int, maxBodyBytes: Int
    ) -> Outcome {
        var start = 0
        while start + 1 < bytes.count && bytes[start] == cr && bytes[start + 1] == lf { start += 2 }
        // A TLS handshake record (0x16) cannot open a request line: refuse it at once
        // rather than wait for a blank line a ClientHello never contains.
        if start < bytes.count && bytes[start] == tlsHandshakeRecord { return .failure(.tlsHandshake) }
        guard let end = blankLine(in: bytes, from: max(start, searchFrom)) else {
            if bytes.count > maxHeaderBytes { return .failure(.headTooLarge(limit: maxHeaderBytes)) }
            return .incomplete(resumeAt: max(start, bytes.count - 3))
        }
        guard end + 4 <= maxHeaderBytes else { return .failure(.headTooLarge(limit: maxHeaderBytes)) }
        do {
            let head = try parse(bytes, from: start, to: end + 2, maxBodyBytes: maxBodyBytes)
            return .head(head, length: end + 4)
        } catch {
            return .failure(error)
        }
    }

    /// The index of the CRLFCRLF that ends the head, searching from `from`.
    private static func blankLine(in bytes: UnsafeBufferPointer<UInt8>, from: Int) -> Int? {
        var i = from
        while i + 3 < bytes.count {
            if bytes[i + 3] != lf { i += bytes[i + 3] == cr ? 1 : 4; continue }
            if bytes[i] == cr && bytes[i + 1] == lf && bytes[i + 2] == cr { return i }
            i += 1
        }
        return nil
    }

    /// Parses lines in `start..<end`, where `end` is just past the last header line's CRLF.
    private static func parse(
        _ bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int, maxBodyBytes: Int
    ) throws(HTTPRequestError) -> HTTPRequestHead {
        var lineStart = start
        var lines: [Range<Int>] = []
        lines.reserveCapacity(16)
        var i = start
        while i < end {
            let byte = bytes[i]
            if byte == cr {
                guard i + 1 < end, bytes[i + 1] == lf else { throw .bareLineBreak }
                lines.append(lineStart..<i)
                i += 2
                lineStart = i
            } else if byte == lf {
                throw .bareLineBreak
            } else {
                i += 1
            }
        }
        guard let requestLine = lines.first else { throw .malformedRequestLine }
        var head = try parseRequestLine(bytes, requestLine)
        var fields: [(String, String)] = []
        fields.reserveCapacity(lines.count - 1)
        for line in lines.dropFirst() {
            fields.append(try parseField(bytes, line))
        }
        head.headers = HTTPHeaders(fields)
        try applySemantics(to: &head, maxBodyBytes: maxBodyBytes)
        return head
    }

    private static func parseRequestLine(
        _ bytes: UnsafeBufferPointer<UInt8>, _ line: Range<Int>
    ) throws(HTTPRequestError) -> HTTPRequestHead {
        var spaceCount = 0
        var firstSpace = 0, secondSpace = 0
        for i in line where bytes[i] == space {
            spaceCount += 1
            if spaceCount == 1 { firstSpace = i } else if spaceCount == 2 { secondSpace = i }
        }
        guard spaceCount == 2 else { throw .malformedRequestLine }
        let method = line.lowerBound..<firstSpace
        let target = firstSpace + 1..<secondSpace
        let version = secondSpace + 1..<line.upperBound
        guard !method.isEmpty, method.allSatisfy({ isTokenByte(bytes[$0]) }),
            !target.isEmpty, target.allSatisfy({ bytes[$0] > 0x20 && bytes[$0] < 0x7F }),
            version.count == 8
        else { throw .malformedRequestLine }
        let v = UnsafeBufferPointer(rebasing: bytes[version])
        guard v[0..<5].elementsEqual("HTTP/".utf8), isDigit(v[5]), v[6] == UInt8(ascii: "."), isDigit(v[7])
        else { throw .malformedRequestLine }
        guard v[5] == UInt8(ascii: "1") else { throw .unsupportedVersion(String(decoding: v, as: UTF8.self)) }
        return HTTPRequestHead(
            method: ascii(bytes, method), target: ascii(bytes, target),
            minorVersion: v[7] == UInt8(ascii: "0") ? 0 : 1,
            headers: [:], contentLength: 0, keepAlive: true, expectsContinue: false)
    }

    private static func parseField(
        _ bytes: UnsafeBufferPointer<UInt8>, _ line: Range<Int>
    ) throws(HTTPRequestError) -> (String, String) {
        guard let first = line.first else { throw .malformedHeaderField }
        if bytes[first] == space || bytes[first] == tab { throw .obsoleteLineFolding }
        guard let colon = line.first(where: { bytes[$0] == colonByte }), colon > first,
            (first..<colon).allSatisfy({ isTokenByte(bytes[$0]) })
        else { throw .malformedHeaderField }
        var valueStart = colon + 1
        var valueEnd = line.upperBound
        while valueStart < valueEnd && (bytes[valueStart] == space || bytes[valueStart] == tab) { valueStart += 1 }
        while valueEnd > valueStart && (bytes[valueEnd - 1] == space || bytes[valueEnd - 1] == tab) { valueEnd -= 1 }
        var isASCII = true
        for i in valueStart..<valueEnd {
            let byte = bytes[i]
            if (byte < 0x20 && byte != tab) || byte == 0x7F { throw .controlCharacter }
            if byte >= 0x80 { isASCII = false }
        }
        let value = valueStart..<valueEnd
        return (ascii(bytes, first..<colon), isASCII ? ascii(bytes, value) : text(bytes, value))
    }

    /// Reads framing and connection management from the header fields.
    private static func applySemantics(to head: inout HTTPRequestHead, maxBodyBytes: Int) throws(HTTPRequestError) {
        var contentLength: Int?
        var close = false
        var keepAlive = false
        for (name, value) in head.headers {
            switch name.utf8.count {
            case 14 where HTTPASCII.equalIgnoringCase(name, "content-length") == true:
                for item in value.split(separator: ",", omittingEmptySubsequences: false) {
                    let digits = item.trimmingSpaces
                    guard !digits.isEmpty, digits.utf8.allSatisfy(isDigit) else { throw .invalidContentLength }
                    let length = digits.utf8.count > 15 ? Int.max : Int(digits)!
                    guard contentLength == nil || contentLength == length else { throw .invalidContentLength }
                    contentLength = length
                }
            case 17 where HTTPASCII.equalIgnoringCase(name, "transfer-encoding") == true:
                throw .transferEncoding
            case 10 where HTTPASCII.equalIgnoringCase(name, "connection") == true:
                for option in value.split(separator: ",") {
                    let option = option.trimmingSpaces
                    if HTTPASCII.lowercasedEquals(option, "close") { close = true }
                    else if HTTPASCII.lowercasedEquals(option, "keep-alive") { keepAlive = true }
                }
            case 6 where HTTPASCII.equalIgnoringCase(name, "expect") == true:
                guard HTTPASCII.lowercasedEquals(value, "100-continue") else { throw .unsupportedExpectation }
                head.expectsContinue = head.minorVersion >= 1
            default:
                break
            }
        }
        head.contentLength = contentLength ?? 0
        guard head.contentLength <= maxBodyBytes else {
            throw .bodyTooLarge(length: head.contentLength, limit: maxBodyBytes)
        }
        head.keepAlive = !close && (head.minorVersion >= 1 || keepAlive)
    }

    private static func ascii(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    /// Header text that is not ASCII: UTF-8 if it is valid UTF-8, else ISO-8859-1.
    private static func text(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        let slice = UnsafeBufferPointer(rebasing: bytes[range])
        if let utf8 = String(validating: slice, as: UTF8.self) { return utf8 }
        return String(String.UnicodeScalarView(slice.map { Unicode.Scalar($0) }))
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    /// RFC 9110 `tchar`.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
        default: return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    private static let tlsHandshakeRecord: UInt8 = 0x16
    private static let cr = UInt8(ascii: "\r")
    private static let lf = UInt8(ascii: "\n")
    private static let space = UInt8(ascii: " ")
    private static let tab = UInt8(ascii: "\t")
    private static let colonByte = UInt8(ascii: ":")
}

extension Substring {
    /// Without leading and trailing spaces and tabs.
    fileprivate var trimmingSpaces: Substring {
        var s = self
        while let c = s.first, c == " " || c == "\t" { s.removeFirst() }
        while let c = s.last, c == " " || c == "\t" { s.removeLast() }
        return s
    }
}

/// ASCII case rules for header names and option tokens, so the per-request path needs
/// no Foundation or Unicode case mapping. Each falls back to the Unicode-aware call it
/// replaces when the text is not ASCII, so answers never change.
enum HTTPASCII {
    /// Whether `a` equals `lower` (an ASCII literal, lowercase) ignoring ASCII case;
    /// nil when `a` is not ASCII.
    static func equalIgnoringCase(_ a: some StringProtocol, _ lower: String) -> Bool? {
        guard a.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        return HTTPHeaders.namesMatch(a, lower)
    }

    /// `a.lowercased() == lower`, for an ASCII lowercase literal `lower`.
    static func lowercasedEquals(_ a: some StringProtocol, _ lower: String) -> Bool {
        equalIgnoringCase(a, lower) ?? (a.lowercased() == lower)
    }
}
