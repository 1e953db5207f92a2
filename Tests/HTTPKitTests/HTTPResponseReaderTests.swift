import Foundation
import XCTest
@testable import HTTPKit
#if canImport(Glibc)
import Glibc
#endif

/// The loopback client's response reader, fed exact bytes through a socket pair —
/// whole, or a few bytes at a time so every delimiter straddles two reads.
final class HTTPResponseReaderTests: XCTestCase {
    /// Reads one response from `wire`, written in pieces of `piece` bytes (0: all at once).
    private func read(_ wire: String, piece: Int = 0, isHead: Bool = false, closeAfter: Bool = true) throws
        -> HTTPResponseReader.Response {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
        defer { close(fds[0]) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fds[0], SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let bytes = Array(wire.utf8)
        let writer = fds[1]
        let thread = Thread {
            let step = piece > 0 ? piece : bytes.count
            var offset = 0
            while offset < bytes.count {
                let end = min(bytes.count, offset + step)
                _ = bytes[offset..<end].withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }
                offset = end
                if piece > 0 { usleep(200) }
            }
            if closeAfter { close(writer) }
        }
        thread.start()
        defer { if !closeAfter { close(writer) } }
        var reader = HTTPResponseReader(fd: fds[0], maxBodyBytes: 1 << 20)
        return try reader.read(isHead: isHead)
    }

    func testContentLengthBodyAndHeadersInPieces() throws {
        let wire = "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nX-Request-Id:   req_1  \r\n"
            + "Content-Length: 13\r\n\r\n{\"ok\":\"yes\"}\n"
        for piece in [0, 1, 3, 7] {
            let response = try read(wire, piece: piece)
            XCTAssertEqual(response.message.status, 201, "piece \(piece)")
            XCTAssertEqual(response.message.headers["x-request-id"], "req_1", "piece \(piece)")
            XCTAssertEqual(response.message.headers["CONTENT-TYPE"], "application/json")
            XCTAssertEqual(String(decoding: response.message.body, as: UTF8.self), "{\"ok\":\"yes\"}\n")
            XCTAssertTrue(response.keepAlive)
        }
    }

    func testChunkedBodyWithExtensionsAndTrailerEnd() throws {
        let wire = "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n"
            + "5;name=value\r\nhello\r\n7\r\n, world\r\n0\r\n\r\n"
        for piece in [0, 2, 5] {
            let response = try read(wire, piece: piece)
            XCTAssertEqual(String(decoding: response.message.body, as: UTF8.self), "hello, world", "piece \(piece)")
            XCTAssertTrue(response.keepAlive)
        }
    }

    func testConnectionHeaderDecidesKeepAlive() throws {
        XCTAssertFalse(try read("HTTP/1.1 204 No Content\r\nConnection: Close\r\n\r\n").keepAlive)
        XCTAssertFalse(try read("HTTP/1.0 204 No Content\r\n\r\n").keepAlive)
        XCTAssertTrue(try read("HTTP/1.0 204 No Content\r\nConnection: upgrade, Keep-Alive\r\n\r\n").keepAlive)
    }

    func testBodyWithoutLengthRunsToTheEndAndClosesTheConnection() throws {
        let response = try read("HTTP/1.1 200 OK\r\n\r\nall of it", piece: 4)
        XCTAssertEqual(String(decoding: response.message.body, as: UTF8.self), "all of it")
        XCTAssertFalse(response.keepAlive)
    }

    func testHeadAnd204HaveNoBody() throws {
        let head = try read("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", isHead: true, closeAfter: false)
        XCTAssertEqual(head.message.body, Data())
        XCTAssertEqual(head.message.headers["Content-Length"], "10")
    }

    func testStatusLineMustBeHTTP1() {
        XCTAssertThrowsError(try read("ICY 200 OK\r\n\r\n")) { error in
            XCTAssertEqual((error as? HTTPClientError)?.kind, .invalidResponse)
            XCTAssertEqual((error as? HTTPClientError)?.message, "not an HTTP/1.1 status line: ICY 200 OK")
        }
        XCTAssertThrowsError(try read("HTTP/1.1 2x0 OK\r\n\r\n")) { error in
            XCTAssertEqual(error as? HTTPClientError, HTTPClientError(.invalidResponse, "not an HTTP/1.1 status line: HTTP/1.1 2x0 OK"))
        }
        XCTAssertThrowsError(try read("HTTP/1.1 200 OK\r\nno colon here\r\n\r\n")) { error in
            XCTAssertEqual((error as? HTTPClientError)?.message, "bad header line")
        }
    }

    func testTruncatedResponsesAreConnectionLost() {
        XCTAssertThrowsError(try read("")) { error in
            XCTAssertEqual((error as? HTTPClientError)?.kind, .connectionLost)
            XCTAssertEqual((error as? HTTPClientError)?.message, "the connection closed before the response")
        }
        XCTAssertThrowsError(try read("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")) { error in
            XCTAssertEqual((error as? HTTPClientError)?.message, "the connection closed in the middle of the response")
        }
    }

    func testBadFramingIsRefused() {
        XCTAssertThrowsError(try read("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n")) { error in
            XCTAssertEqual((error as? HTTPClientError)?.message, "bad Content-Length")
        }
        XCTAssertThrowsError(try read("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")) { error in
            XCTAssertEqual((error as? HTTPClientError)?.message, "bad chunk size")
        }
        XCTAssertThrowsError(try read("HTTP/1.1 200 OK\r\nContent-Length: 2000000\r\n\r\n")) { error in
            XCTAssertEqual((error as? HTTPClientError)?.kind, .tooLarge)
        }
    }

    func testLargeBodyGrowsTheBuffer() throws {
        let body = String(repeating: "0123456789", count: 20_000)
        let response = try read("HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body)
        XCTAssertEqual(response.message.body.count, 200_000)
        XCTAssertEqual(String(decoding: response.message.body, as: UTF8.self), body)
    }
}

/// Header names compare ignoring ASCII case only; values are trimmed of HTTP whitespace.
final class HTTPHeadersTests: XCTestCase {
    func testNamesMatchIgnoringASCIICaseOnly() {
        XCTAssertTrue(HTTPHeaders.namesMatch("Content-Length", "content-LENGTH"))
        XCTAssertFalse(HTTPHeaders.namesMatch("Content-Length", "Content-Lengt"))
        XCTAssertFalse(HTTPHeaders.namesMatch("a@", "a`"))   // 0x40 and 0x60 differ only in bit 5 but are not letters
        XCTAssertFalse(HTTPHeaders.namesMatch("X-[", "X-{"))
        XCTAssertFalse(HTTPHeaders.namesMatch("Idempotency-\u{212A}ey", "Idempotency-Key"))   // Kelvin sign: not a token character
        XCTAssertTrue(HTTPHeaders.namesMatch("", ""))
    }

    func testSubscriptReplacesEveryMatchingField() {
        var headers: HTTPHeaders = ["ETag": "\"1\"", "etag": "\"2\"", "Other": "x"]
        XCTAssertEqual(headers.values("ETAG"), ["\"1\"", "\"2\""])
        headers["Etag"] = "\"3\""
        XCTAssertEqual(headers.fields.map(\.name), ["Other", "Etag"])
        XCTAssertEqual(headers["etag"], "\"3\"")
    }

    func testTrimmingWhitespace() {
        XCTAssertEqual(HTTPHeaders.trimmingWhitespace(" \t 12 \t"), "12")
        XCTAssertEqual(HTTPHeaders.trimmingWhitespace("   "), "")
        XCTAssertEqual(HTTPHeaders.trimmingWhitespace("a b"), "a b")
    }
}

/// `path` and `queryItems` take byte-level fast paths; they must answer what the plain
/// Foundation decoding (kept here as the reference) answers.
final class HTTPRequestTargetTests: XCTestCase {
    private func referencePath(_ target: String) -> String {
        let raw = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        return raw.removingPercentEncoding ?? raw
    }

    private func referenceQuery(_ target: String) -> [String] {
        guard let q = target.firstIndex(of: "?") else { return [] }
        return target[target.index(after: q)...].split(separator: "&").compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ s: Substring) -> String {
                let plusless = s.replacingOccurrences(of: "+", with: " ")
                return plusless.removingPercentEncoding ?? plusless
            }
            guard let name = parts.first, !name.isEmpty else { return nil }
            return "\(decode(name))=\(parts.count > 1 ? decode(parts[1]) : "")"
        }
    }

    func testDecodingMatchesFoundation() {
        let targets = ["/", "", "?", "?a=1", "/users", "/users/usr_ada?limit=5", "/users/usr%5Fada", "/users/%zz", "/a%20b/c?x=%2",
                       "/audit-events?limit=100&cursor=YzEuYWJj-_", "/u?q=ada+lovelace&q=a%2Bb&&=x&flag&e=&x==y",
                       "/u?q=%E6%97%A5%E6%9C%AC&bad=%ff", "/p?a=1?b=2", "/é?q=ü", "/a?x=\u{301}", "/a?\u{301}x=1",
                       "/users?email=Ada%40Example.com"]
        for t in targets {
            let r = HTTPRequestMessage(method: "GET", target: t)
            XCTAssertEqual(r.path, referencePath(t), t)
            XCTAssertEqual(r.queryItems.map { "\($0.name)=\($0.value)" }, referenceQuery(t), t)
        }
    }
}
