import Foundation

/// Serializes responses for the wire.
enum HTTPResponseEncoder {
    /// The bytes of `response` as an HTTP/1.1 message.
    ///
    /// Writes the status line with its reason phrase, the handler's header fields in
    /// order, then `Content-Length` (omitted, with the body, for 1xx, 204 and 304) and
    /// `Connection: close` when `keepAlive` is false, or `Connection: keep-alive` when
    /// an HTTP/1.0 client asked to keep the connection. The handler's own
    /// `Content-Length`, `Transfer-Encoding` and `Connection` fields are replaced, and a
    /// field whose name or value contains CR or LF is dropped (no header injection).
    /// A status outside 100...999 is sent as 500. With `headOnly` (the answer to a
    /// HEAD request) the body is left out but `Content-Length` still gives its size.
    static func encode(
        _ response: HTTPResponseMessage, keepAlive: Bool, minorVersion: Int, headOnly: Bool = false
    ) -> [UInt8] {
        let status = (100...999).contains(response.status) ? response.status : 500
        let hasBody = !(status < 200 || status == 204 || status == 304)
        let writesBody = hasBody && !headOnly
        var out: [UInt8] = []
        out.reserveCapacity(128 + response.headers.fields.count * 48 + (writesBody ? response.body.count : 0))
        out.append(contentsOf: "HTTP/1.1 ".utf8)
        appendDecimal(status, to: &out)
        out.append(UInt8(ascii: " "))
        out.append(contentsOf: reasonPhrase(status).utf8)
        out.append(contentsOf: "\r\n".utf8)
        for (name, value) in response.headers where isSafe(name, value) && !isFraming(name) {
            out.append(contentsOf: name.utf8)
            out.append(contentsOf: ": ".utf8)
            out.append(contentsOf: value.utf8)
            out.append(contentsOf: "\r\n".utf8)
        }
        if hasBody {
            out.append(contentsOf: "Content-Length: ".utf8)
            appendDecimal(response.body.count, to: &out)
            out.append(contentsOf: "\r\n".utf8)
        }
        if !keepAlive {
            out.append(contentsOf: "Connection: close\r\n".utf8)
        } else if minorVersion == 0 {
            out.append(contentsOf: "Connection: keep-alive\r\n".utf8)
        }
        out.append(contentsOf: "\r\n".utf8)
        if writesBody { out.append(contentsOf: response.body) }
        return out
    }

    /// The interim response that tells a client sending `Expect: 100-continue` to go on.
    static let continueResponse = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    /// Whether the handler's response asks to close the connection: a `Connection`
    /// field (any case) with a `close` option (any case, spaces and tabs around it).
    static func asksToClose(_ response: HTTPResponseMessage) -> Bool {
        response.headers.fields.contains { field in
            let isConnection = HTTPASCII.equalIgnoringCase(field.name, "connection")
                ?? (field.name.caseInsensitiveCompare("Connection") == .orderedSame)
            guard isConnection else { return false }
            let value = field.value
            guard value.utf8.allSatisfy({ $0 < 0x80 }) else {
                return value.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces).lowercased() == "close" }
            }
            return value.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: true).contains { option in
                var o = option[...]
                while let f = o.first, f == 0x20 || f == 0x09 { o = o.dropFirst() }
                while let l = o.last, l == 0x20 || l == 0x09 { o = o.dropLast() }
                return HTTPASCII.equalIgnoringCase(Substring(o), "close") == true
            }
        }
    }

    /// `Content-Length`, `Transfer-Encoding` or `Connection` in any case (the encoder
    /// writes its own); compared as `name.lowercased()` would compare it.
    private static func isFraming(_ name: String) -> Bool {
        guard name.utf8.allSatisfy({ $0 < 0x80 }) else {
            return ["content-length", "transfer-encoding", "connection"].contains(name.lowercased())
        }
        switch name.utf8.count {
        case 14: return HTTPASCII.equalIgnoringCase(name, "content-length") == true
        case 17: return HTTPASCII.equalIgnoringCase(name, "transfer-encoding") == true
        case 10: return HTTPASCII.equalIgnoringCase(name, "connection") == true
        default: return false
        }
    }

    /// Appends `n` (non-negative) in decimal.
    private static func appendDecimal(_ n: Int, to out: inout [UInt8]) {
        if n < 10 && n >= 0 { out.append(UInt8(truncatingIfNeeded: 48 + n)); return }
        out.append(contentsOf: String(n).utf8)
    }

    private static func isSafe(_ name: String, _ value: String) -> Bool {
        !name.isEmpty && !name.utf8.contains { $0 == 13 || $0 == 10 || $0 == 58 || $0 == 32 }
            && !value.utf8.contains { $0 == 13 || $0 == 10 }
    }

    /// The RFC 9110 reason phrase of `status`, or a generic one for its class.
    static func reasonPhrase(_ status: Int) -> String {
        if let phrase = phrases[status] { return phrase }
        switch status / 100 {
        case 1: return "Informational"
        case 2: return "Success"
        case 3: return "Redirection"
        case 4: return "Client Error"
        default: return "Server Error"
        }
    }

    private static let phrases: [Int: String] = [
        100: "Continue", 101: "Switching Protocols",
        200: "OK", 201: "Created", 202: "Accepted", 203: "Non-Authoritative Information",
        204: "No Content", 205: "Reset Content", 206: "Partial Content",
        300: "Multiple Choices", 301: "Moved Permanently", 302: "Found", 303: "See Other",
        304: "Not Modified", 307: "Temporary Redirect", 308: "Permanent Redirect",
        400: "Bad Request", 401: "Unauthorized", 402: "Payment Required", 403: "Forbidden",
        404: "Not Found", 405: "Method Not Allowed", 406: "Not Acceptable",
        407: "Proxy Authentication Required", 408: "Request Timeout", 409: "Conflict",
        410: "Gone", 411: "Length Required", 412: "Precondition Failed",
        413: "Content Too Large", 414: "URI Too Long", 415: "Unsupported Media Type",
        416: "Range Not Satisfiable", 417: "Expectation Failed", 421: "Misdirected Request",
        422: "Unprocessable Content", 423: "Locked", 424: "Failed Dependency",
        425: "Too Early", 426: "Upgrade Required", 428: "Precondition Required",
        429: "Too Many Requests", 431: "Request Header Fields Too Large",
        451: "Unavailable For Legal Reasons",
        500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway",
        503: "Service Unavailable", 504: "Gateway Timeout", 505: "HTTP Version Not Supported",
    ]
}
