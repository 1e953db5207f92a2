import Foundation

/// A request the server refuses before it reaches the handler, with the status it
/// answers and the code and message of the JSON error body
/// `{"error":{"code":"…","message":"…"}}`. The connection is closed afterwards.
struct HTTPRequestError: Error, Equatable, Sendable {
    var status: Int
    var code: String
    var message: String

    /// 400 `invalid_request`.
    static func invalid(_ message: String) -> HTTPRequestError {
        HTTPRequestError(status: 400, code: "invalid_request", message: message)
    }

    static let malformedRequestLine = invalid(
        "malformed request line: expected \"METHOD /target HTTP/1.1\"")
    static let malformedHeaderField = invalid(
        "malformed header field: expected \"Name: value\"")
    static let bareLineBreak = invalid(
        "bare CR or LF in the request head: lines must end with CRLF")
    static let obsoleteLineFolding = invalid(
        "obsolete line folding in header fields is not supported")
    static let controlCharacter = invalid(
        "header field value contains a control character")
    static let invalidContentLength = invalid(
        "invalid Content-Length: expected one non-negative decimal integer")
    static let tlsHandshake = invalid(
        "a TLS handshake arrived, but this server speaks plain HTTP: use an http:// URL, not https://")
    static let transferEncoding = HTTPRequestError(
        status: 411, code: "length_required",
        message: "Transfer-Encoding is not supported: send the body with a Content-Length header")
    static let unsupportedExpectation = HTTPRequestError(
        status: 417, code: "expectation_failed",
        message: "unsupported Expect header: only 100-continue is understood")
    static let timedOut = HTTPRequestError(
        status: 408, code: "request_timeout",
        message: "the request was not received in time")
    static let serverBusy = HTTPRequestError(
        status: 503, code: "server_busy",
        message: "too many open connections: retry later")

    /// 503 `server_busy` for a connection closed to make room for a new client.
    static let evicted = HTTPRequestError(
        status: 503, code: "server_busy",
        message: "the server is full and this connection had waited longest for its request: retry")

    /// 429 `too_many_connections`: the client's address holds `perAddress` connections.
    static func tooManyConnections(perAddress: Int) -> HTTPRequestError {
        HTTPRequestError(
            status: 429, code: "too_many_connections",
            message: "this address already holds \(perAddress) open connection\(perAddress == 1 ? "" : "s"), "
                + "the most one address may hold: finish or close one, then retry")
    }

    static func headTooLarge(limit: Int) -> HTTPRequestError {
        HTTPRequestError(
            status: 431, code: "header_too_large",
            message: "request head exceeds the limit of \(limit) bytes")
    }

    static func bodyTooLarge(length: Int, limit: Int) -> HTTPRequestError {
        HTTPRequestError(
            status: 413, code: "payload_too_large",
            message: "request body of \(length) bytes exceeds the limit of \(limit) bytes")
    }

    static func unsupportedVersion(_ version: String) -> HTTPRequestError {
        HTTPRequestError(
            status: 505, code: "http_version_not_supported",
            message: "\(version) is not supported: use HTTP/1.1")
    }

    /// The response sent for this error: JSON body, `Content-Type: application/json`.
    var response: HTTPResponseMessage {
        let body = #"{"error":{"code":"# + jsonString(code) + #","message":"# + jsonString(message) + "}}"
        var headers: HTTPHeaders = ["Content-Type": "application/json"]
        // Connection limits clear up within moments: say when to come back.
        if status == 429 || status == 503 { headers.add("Retry-After", "1") }
        return HTTPResponseMessage(status: status, headers: headers, body: Data(body.utf8))
    }
}

/// `text` as a JSON string literal, quotes included.
func jsonString(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where scalar.value < 0x20:
            out += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                + String(scalar.value, radix: 16)
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}
