import XCTest
@testable import HTTPKit

/// Keep-alive, pipelining, closing and refused requests, over a raw socket.
final class HTTPServerConnectionTests: XCTestCase {
    func testPipelinedRequestsOnOneConnectionAreAnsweredInOrder() throws {
        let recorder = RequestRecorder()
        let server = try startServer(self, handler: echoHandler(recorder))
        let client = try RawClient(port: server.port)
        client.send(
            "GET /first?a=1 HTTP/1.1\r\nHost: x\r\n\r\n"
                + "POST /second HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
        XCTAssertEqual(client.readResponse(), echoResponse("GET", "/first?a=1"))
        XCTAssertEqual(client.readResponse(), echoResponse("POST", "/second", body: "hello"))

        client.send("DELETE /third HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertEqual(client.readResponse(), echoResponse("DELETE", "/third"))
        XCTAssertEqual(recorder.requests.map(\.target), ["/first?a=1", "/second", "/third"])
        XCTAssertEqual(server.openConnectionCount, 1)
    }

    func testHeadResponseHasNoBodyAndTheConnectionStaysUsable() throws {
        let server = try startServer(self, handler: echoHandler())
        let client = try RawClient(port: server.port)
        client.send("HEAD /h HTTP/1.1\r\nHost: x\r\n\r\nGET /g HTTP/1.1\r\nHost: x\r\n\r\n")
        let expected = echoResponse("HEAD", "/h")
        let headOnly = String(expected[..<expected.range(of: "\r\n\r\n")!.upperBound])
        XCTAssertEqual(client.readResponse(toHEAD: true), headOnly)
        XCTAssertEqual(client.readResponse(), echoResponse("GET", "/g"))
    }

    func testRequestSplitAcrossWritesIsReassembled() throws {
        let server = try startServer(self, handler: echoHandler())
        let client = try RawClient(port: server.port)
        for part in ["PUT /sl", "ow HTTP/1.1\r\nHo", "st: x\r\nContent-Length: 4\r", "\n\r\nab", "cd"] {
            client.send(part)
            Thread.sleep(forTimeInterval: 0.01)
        }
        XCTAssertEqual(client.readResponse(), echoResponse("PUT", "/slow", body: "abcd"))
    }

    func testConnectionCloseIsHonoured() throws {
        let server = try startServer(self, handler: echoHandler())
        let client = try RawClient(port: server.port)
        client.send("GET /bye HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nGET /ignored HTTP/1.1\r\n\r\n")
        let rest = client.readToEnd()
        XCTAssertEqual(rest.text, echoResponse("GET", "/bye", close: true))
        XCTAssertTrue(rest.closed)
    }

    func testHandlerCanAskToClose() throws {
        let server = try startServer(self) { _ in HTTPResponseMessage(status: 200, headers: ["Connection": "close"]) }
        let client = try RawClient(port: server.port)
        client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        let rest = client.readToEnd()
        XCTAssertEqual(rest.text, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        XCTAssertTrue(rest.closed)
    }

    func testHTTP10ClosesUnlessKeepAliveIsRequested() throws {
        let server = try startServer(self, handler: echoHandler())
        let keep = try RawClient(port: server.port)
        keep.send("GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        XCTAssertEqual(
            keep.readResponse(),
            echoResponse("GET", "/a").replacingOccurrences(of: "\r\n\r\n", with: "\r\nConnection: keep-alive\r\n\r\n"))
        keep.send("GET /b HTTP/1.0\r\n\r\n")
        let rest = keep.readToEnd()
        XCTAssertEqual(rest.text, echoResponse("GET", "/b", close: true))
        XCTAssertTrue(rest.closed)
    }

    func testMalformedRequestLineGets400AndClose() throws {
        let recorder = RequestRecorder()
        let server = try startServer(self, handler: echoHandler(recorder))
        let client = try RawClient(port: server.port)
        client.send("GARBAGE\r\nHost: x\r\n\r\n")
        let body = #"{"error":{"code":"invalid_request","message":"malformed request line: expected \"METHOD /target HTTP/1.1\""}}"#
        let rest = client.readToEnd()
        XCTAssertEqual(
            rest.text,
            "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
                + "Connection: close\r\n\r\n" + body)
        XCTAssertTrue(rest.closed)
        XCTAssertEqual(recorder.requests.count, 0)
    }

    func testOversizedBodyGets413WithoutCallingTheHandler() throws {
        let recorder = RequestRecorder()
        let server = try startServer(self, limits: .init(maxBodyBytes: 1024), handler: echoHandler(recorder))
        let client = try RawClient(port: server.port)
        client.send("POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: 1025\r\n\r\n" + String(repeating: "z", count: 1025))
        let body = #"{"error":{"code":"payload_too_large","message":"request body of 1025 bytes exceeds the limit of 1024 bytes"}}"#
        let rest = client.readToEnd()
        XCTAssertEqual(
            rest.text,
            "HTTP/1.1 413 Content Too Large\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
                + "Connection: close\r\n\r\n" + body)
        XCTAssertTrue(rest.closed)
        XCTAssertEqual(recorder.requests.count, 0)
    }

    func testBodyAtTheLimitIsAccepted() throws {
        let server = try startServer(self, limits: .init(maxBodyBytes: 1024), handler: echoHandler())
        let client = try RawClient(port: server.port)
        let body = String(repeating: "z", count: 1024)
        client.send("POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: 1024\r\n\r\n" + body)
        XCTAssertEqual(client.readResponse(), echoResponse("POST", "/big", body: body))
    }

    func testOversizedHeadGets431() throws {
        let server = try startServer(self, limits: .init(maxHeaderBytes: 256), handler: echoHandler())
        let client = try RawClient(port: server.port)
        client.send("GET / HTTP/1.1\r\nX-Long: \(String(repeating: "a", count: 300))\r\n\r\n")
        let rest = client.readToEnd()
        XCTAssertTrue(rest.text.hasPrefix("HTTP/1.1 431 Request Header Fields Too Large\r\n"), rest.text)
        XCTAssertTrue(
            rest.text.hasSuffix(#"{"error":{"code":"header_too_large","message":"request head exceeds the limit of 256 bytes"}}"#))
        XCTAssertTrue(rest.closed)
    }

    func testChunkedRequestGets411() throws {
        let server = try startServer(self, handler: echoHandler())
        let client = try RawClient(port: server.port)
        client.send("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
        let rest = client.readToEnd()
        XCTAssertTrue(rest.text.hasPrefix("HTTP/1.1 411 Length Required\r\n"), rest.text)
        XCTAssertTrue(rest.text.hasSuffix(#"{"error":{"code":"length_required","message":"Transfer-Encoding is not supported: send the body with a Content-Length header"}}"#))
    }

    func testDroppedResponseClosesTheConnectionWithoutBytes() throws {
        let recorder = RequestRecorder()
        let server = try startServer(self) { request in
            recorder.record(request)
            return HTTPResponseMessage(status: 201, body: Data("lost".utf8), dropped: true)
        }
        let client = try RawClient(port: server.port)
        client.send("POST /commit HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nok")
        let rest = client.readToEnd()
        XCTAssertEqual(rest.text, "")
        XCTAssertTrue(rest.closed)
        XCTAssertEqual(recorder.requests.map(\.body), [Data("ok".utf8)])
    }

    func testExpectContinueGetsAnInterimResponse() throws {
        let server = try startServer(self, handler: echoHandler())
        let client = try RawClient(port: server.port)
        client.send("POST /e HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n")
        XCTAssertEqual(client.readResponse(), "HTTP/1.1 100 Continue\r\n\r\n")
        client.send("xyz")
        XCTAssertEqual(client.readResponse(), echoResponse("POST", "/e", body: "xyz"))
    }

    func testIdleConnectionIsClosedAfterTimeoutAndPartialRequestGets408() throws {
        let server = try startServer(self, limits: .init(idleTimeout: 0.3), handler: echoHandler())
        let idle = try RawClient(port: server.port)
        let partial = try RawClient(port: server.port)
        partial.send("GET / HTTP/1.1\r\nHo")
        let idleRest = idle.readToEnd()
        XCTAssertEqual(idleRest.text, "")
        XCTAssertTrue(idleRest.closed)
        let partialRest = partial.readToEnd()
        XCTAssertTrue(partialRest.text.hasPrefix("HTTP/1.1 408 Request Timeout\r\n"), partialRest.text)
        XCTAssertTrue(partialRest.closed)
    }

    func testConnectionsBeyondTheLimitGet503() throws {
        let server = try startServer(self, limits: .init(maxConnections: 1), handler: echoHandler())
        let first = try RawClient(port: server.port)
        first.send("GET /1 HTTP/1.1\r\n\r\n")
        XCTAssertEqual(first.readResponse(), echoResponse("GET", "/1"))
        let second = try RawClient(port: server.port)
        let rest = second.readToEnd()
        XCTAssertTrue(rest.text.hasPrefix("HTTP/1.1 503 Service Unavailable\r\n"), rest.text)
        XCTAssertTrue(rest.text.hasSuffix(#"{"error":{"code":"server_busy","message":"too many open connections: retry later"}}"#))
    }
}
