import XCTest
@testable import HTTPKit

final class HTTPResponseEncoderTests: XCTestCase {
    private func encode(_ response: HTTPResponseMessage, keepAlive: Bool = true, minorVersion: Int = 1) -> String {
        String(decoding: HTTPResponseEncoder.encode(response, keepAlive: keepAlive, minorVersion: minorVersion), as: UTF8.self)
    }

    func testWritesStatusHeadersInOrderLengthAndBody() {
        let response = HTTPResponseMessage(
            status: 201, headers: HTTPHeaders([("ETag", "\"v2\""), ("x-lower", "a"), ("Set-Cookie", "1"), ("Set-Cookie", "2")]),
            body: Data("{}".utf8))
        XCTAssertEqual(
            encode(response),
            "HTTP/1.1 201 Created\r\nETag: \"v2\"\r\nx-lower: a\r\nSet-Cookie: 1\r\nSet-Cookie: 2\r\nContent-Length: 2\r\n\r\n{}")
    }

    func testConnectionHeader() {
        let response = HTTPResponseMessage(status: 200)
        XCTAssertEqual(encode(response, keepAlive: false), "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        XCTAssertEqual(
            encode(response, keepAlive: true, minorVersion: 0),
            "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n")
    }

    func testReplacesFramingHeadersAndDropsInjectedLines() {
        let response = HTTPResponseMessage(
            status: 200,
            headers: HTTPHeaders([
                ("Content-Length", "99"), ("Transfer-Encoding", "chunked"), ("Connection", "close"),
                ("X-Evil", "a\r\nInjected: yes"), ("X-Good", "ok"),
            ]),
            body: Data("abc".utf8))
        XCTAssertEqual(encode(response), "HTTP/1.1 200 OK\r\nX-Good: ok\r\nContent-Length: 3\r\n\r\nabc")
        XCTAssertTrue(HTTPResponseEncoder.asksToClose(response))
        XCTAssertFalse(HTTPResponseEncoder.asksToClose(HTTPResponseMessage(status: 200)))
    }

    func testNoBodyFor204And304() {
        XCTAssertEqual(
            encode(HTTPResponseMessage(status: 204, body: Data("x".utf8))), "HTTP/1.1 204 No Content\r\n\r\n")
        XCTAssertEqual(encode(HTTPResponseMessage(status: 304)), "HTTP/1.1 304 Not Modified\r\n\r\n")
    }

    func testHeadOnlyKeepsTheLengthButNotTheBody() {
        let response = HTTPResponseMessage(status: 200, headers: ["ETag": "\"1\""], body: Data("hello".utf8))
        XCTAssertEqual(
            String(decoding: HTTPResponseEncoder.encode(response, keepAlive: true, minorVersion: 1, headOnly: true), as: UTF8.self),
            "HTTP/1.1 200 OK\r\nETag: \"1\"\r\nContent-Length: 5\r\n\r\n")
    }

    func testReasonPhrases() {
        XCTAssertEqual(HTTPResponseEncoder.reasonPhrase(429), "Too Many Requests")
        XCTAssertEqual(HTTPResponseEncoder.reasonPhrase(431), "Request Header Fields Too Large")
        XCTAssertEqual(HTTPResponseEncoder.reasonPhrase(299), "Success")
        XCTAssertEqual(HTTPResponseEncoder.reasonPhrase(599), "Server Error")
        XCTAssertEqual(encode(HTTPResponseMessage(status: 42)), "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n")
    }

    func testErrorResponseBodyIsEscapedJSON() {
        let error = HTTPRequestError.invalid("bad \"quote\" \\ and \u{1}")
        XCTAssertEqual(
            String(decoding: error.response.body, as: UTF8.self),
            #"{"error":{"code":"invalid_request","message":"bad \"quote\" \\ and \u0001"}}"#)
        XCTAssertEqual(error.response.headers, ["Content-Type": "application/json"])
    }
}

/// The ASCII fast paths in the parser and encoder answer what the Unicode-aware calls
/// they replace answer.
final class HTTPASCIITests: XCTestCase {
    func testEqualIgnoringCase() {
        XCTAssertEqual(HTTPASCII.equalIgnoringCase("Content-LENGTH", "content-length"), true)
        XCTAssertEqual(HTTPASCII.equalIgnoringCase("Content-Lengt", "content-length"), false)
        XCTAssertEqual(HTTPASCII.equalIgnoringCase("Connection", "close"), false)
        XCTAssertNil(HTTPASCII.equalIgnoringCase("\u{212A}eep-alive", "keep-alive"))
        XCTAssertTrue(HTTPASCII.lowercasedEquals("\u{212A}eep-alive", "keep-alive"))  // Kelvin sign lowercases to k
        XCTAssertFalse(HTTPASCII.lowercasedEquals("cl\u{F6}se", "close"))
    }

    func testAsksToCloseMatchesTheUnicodeRule() {
        func reference(_ r: HTTPResponseMessage) -> Bool {
            r.headers.values("Connection").contains { value in
                value.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces).lowercased() == "close" }
            }
        }
        let values = ["close", "CLOSE", " close\t", "keep-alive, Close", "closed", "", ",,", "upgrade,\u{A0}close\u{A0}", "clos\u{E9}", "x, close ,y"]
        let names = ["Connection", "connection", "CONNECTION", "Connectio", "Conn\u{E9}ction", "X-Connection"]
        for name in names {
            for value in values {
                let r = HTTPResponseMessage(status: 200, headers: HTTPHeaders([("A", "b"), (name, value)]))
                XCTAssertEqual(HTTPResponseEncoder.asksToClose(r), reference(r), "\(name): \(value)")
            }
        }
    }

    func testFramingFieldsAreReplacedInAnyCase() {
        let response = HTTPResponseMessage(
            status: 200,
            headers: HTTPHeaders([("CONTENT-length", "9"), ("transfer-ENCODING", "x"), ("connection", "keep-alive"),
                                  ("Content-Lengths", "1"), ("Conn\u{E9}ction", "y")]),
            body: Data("ab".utf8))
        XCTAssertEqual(
            String(decoding: HTTPResponseEncoder.encode(response, keepAlive: true, minorVersion: 1), as: UTF8.self),
            "HTTP/1.1 200 OK\r\nContent-Lengths: 1\r\nConn\u{E9}ction: y\r\nContent-Length: 2\r\n\r\nab")
    }
}
