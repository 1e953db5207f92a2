import XCTest
@testable import HTTPKit

final class HTTPRequestParserTests: XCTestCase {
    private func parse(
        _ text: String, searchFrom: Int = 0, maxHeaderBytes: Int = 64 * 1024, maxBodyBytes: Int = 1024
    ) -> HTTPRequestParser.Outcome {
        Array(text.utf8).withUnsafeBufferPointer {
            HTTPRequestParser.parseHead(
                $0, searchFrom: searchFrom, maxHeaderBytes: maxHeaderBytes, maxBodyBytes: maxBodyBytes)
        }
    }

    private func head(_ text: String) throws -> HTTPRequestHead {
        guard case .head(let head, _) = parse(text) else {
            XCTFail("expected a head, got \(parse(text))")
            throw CancellationError()
        }
        return head
    }

    private func failure(_ text: String, maxHeaderBytes: Int = 64 * 1024) -> HTTPRequestError? {
        guard case .failure(let error) = parse(text, maxHeaderBytes: maxHeaderBytes) else { return nil }
        return error
    }

    func testParsesRequestLineAndHeadersExactlyAsSent() throws {
        let text = "POST /a%20b/c?x=1&y=%2F HTTP/1.1\r\nHost: example\r\nX-MiXeD-Case:  padded value \t\r\n"
            + "Content-Length: 3\r\nX-Empty:\r\n\r\nabcGET"
        guard case .head(let head, let length) = parse(text) else { return XCTFail("\(parse(text))") }
        XCTAssertEqual(length, text.utf8.count - 6)
        XCTAssertEqual(head.method, "POST")
        XCTAssertEqual(head.target, "/a%20b/c?x=1&y=%2F")
        XCTAssertEqual(head.minorVersion, 1)
        XCTAssertEqual(
            head.headers,
            HTTPHeaders([("Host", "example"), ("X-MiXeD-Case", "padded value"), ("Content-Length", "3"), ("X-Empty", "")]))
        XCTAssertEqual(head.contentLength, 3)
        XCTAssertTrue(head.keepAlive)
        XCTAssertFalse(head.expectsContinue)
    }

    func testIncompleteHeadReportsWhereToResume() {
        XCTAssertEqual(parse("GET / HTTP/1.1\r\nHost: x\r\n\r"), .incomplete(resumeAt: 23))
        XCTAssertEqual(parse(""), .incomplete(resumeAt: 0))
        let full = "GET / HTTP/1.1\r\nHost: x\r\n\r\n"
        guard case .head(_, let length) = parse(full, searchFrom: 23) else { return XCTFail() }
        XCTAssertEqual(length, full.utf8.count)
    }

    func testSkipsEmptyLinesBeforeTheRequestLine() throws {
        guard case .head(let head, let length) = parse("\r\n\r\nGET /x HTTP/1.1\r\n\r\n") else { return XCTFail() }
        XCTAssertEqual(head.target, "/x")
        XCTAssertEqual(length, 23)
    }

    func testMalformedRequestLinesAreRefusedWith400() {
        for line in [
            "GARBAGE", "GET /", "GET  / HTTP/1.1", "GET / HTTP/1.1 extra", "GET / http/1.1", "GET / HTTP/1.10",
            "G(T / HTTP/1.1", "GET /\u{7F} HTTP/1.1", "GET /ü HTTP/1.1", " GET / HTTP/1.1",
        ] {
            XCTAssertEqual(failure(line + "\r\nHost: x\r\n\r\n"), .malformedRequestLine, line)
        }
    }

    func testOtherMajorVersionsAre505() {
        XCTAssertEqual(
            failure("GET / HTTP/2.0\r\n\r\n"),
            HTTPRequestError(
                status: 505, code: "http_version_not_supported", message: "HTTP/2.0 is not supported: use HTTP/1.1"))
    }

    func testMalformedHeaderFieldsAreRefusedWith400() {
        XCTAssertEqual(failure("GET / HTTP/1.1\r\nNoColon\r\n\r\n"), .malformedHeaderField)
        XCTAssertEqual(failure("GET / HTTP/1.1\r\nName : v\r\n\r\n"), .malformedHeaderField)
        XCTAssertEqual(failure("GET / HTTP/1.1\r\n: v\r\n\r\n"), .malformedHeaderField)
        XCTAssertEqual(failure("GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n"), .obsoleteLineFolding)
        XCTAssertEqual(failure("GET / HTTP/1.1\r\nA: b\nB: c\r\n\r\n"), .bareLineBreak)
        XCTAssertEqual(failure("GET / HTTP/1.1\r\nA: b\rB: c\r\n\r\n"), .bareLineBreak)
        XCTAssertEqual(failure("GET / HTTP/1.1\r\nA: b\u{1}c\r\n\r\n"), .controlCharacter)
    }

    func testNonASCIIHeaderValuesAreDecodedAsUTF8() throws {
        XCTAssertEqual(try head("GET / HTTP/1.1\r\nX-Name: Zoë\r\n\r\n").headers["x-name"], "Zoë")
    }

    func testContentLengthMustBeOneDecimalNumber() throws {
        XCTAssertEqual(try head("POST / HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n").contentLength, 5)
        for value in ["-1", "", "0x10", "5, 6", "1 2"] {
            XCTAssertEqual(failure("POST / HTTP/1.1\r\nContent-Length: \(value)\r\n\r\n"), .invalidContentLength, value)
        }
        XCTAssertEqual(
            failure("POST / HTTP/1.1\r\nContent-Length: 1\r\ncontent-length: 2\r\n\r\n"), .invalidContentLength)
    }

    func testTransferEncodingIsRefusedWith411() {
        XCTAssertEqual(failure("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"), .transferEncoding)
    }

    func testLimits() {
        XCTAssertEqual(
            failure("POST / HTTP/1.1\r\nContent-Length: 1025\r\n\r\n"),
            HTTPRequestError(
                status: 413, code: "payload_too_large",
                message: "request body of 1025 bytes exceeds the limit of 1024 bytes"))
        XCTAssertEqual(
            failure("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n")?.code, "payload_too_large")
        let request = "GET / HTTP/1.1\r\nX: \(String(repeating: "a", count: 41))\r\n\r\n"
        XCTAssertEqual(request.utf8.count, 64)
        XCTAssertNil(failure(request, maxHeaderBytes: 64))
        XCTAssertEqual(failure(request, maxHeaderBytes: 63), .headTooLarge(limit: 63))
        XCTAssertEqual(failure(String(repeating: "a", count: 64), maxHeaderBytes: 63), .headTooLarge(limit: 63))
    }

    func testConnectionManagement() throws {
        XCTAssertTrue(try head("GET / HTTP/1.1\r\n\r\n").keepAlive)
        XCTAssertFalse(try head("GET / HTTP/1.1\r\nConnection: Close\r\n\r\n").keepAlive)
        XCTAssertFalse(try head("GET / HTTP/1.1\r\nConnection: keep-alive, close\r\n\r\n").keepAlive)
        XCTAssertFalse(try head("GET / HTTP/1.0\r\n\r\n").keepAlive)
        XCTAssertTrue(try head("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").keepAlive)
        XCTAssertEqual(try head("GET / HTTP/1.0\r\n\r\n").minorVersion, 0)
        XCTAssertEqual(try head("GET / HTTP/1.9\r\n\r\n").minorVersion, 1)
    }

    func testExpectContinue() throws {
        XCTAssertTrue(try head("POST / HTTP/1.1\r\nExpect: 100-Continue\r\nContent-Length: 1\r\n\r\n").expectsContinue)
        XCTAssertFalse(try head("POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n").expectsContinue)
        XCTAssertEqual(failure("POST / HTTP/1.1\r\nExpect: something\r\n\r\n"), .unsupportedExpectation)
    }
}
