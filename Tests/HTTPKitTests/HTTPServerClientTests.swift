import XCTest
@testable import HTTPKit
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Round trips through real clients: URLSession and curl.
final class HTTPServerClientTests: XCTestCase {
    private func jsonHandler(_ recorder: RequestRecorder) -> HTTPServer.Handler {
        return { request in
            recorder.record(request)
            let body = request.method == "POST"
                ? Data(#"{"received":"# .utf8) + request.body + Data("}".utf8)
                : Data(#"{"path":"\#(request.path)"}"#.utf8)
            return HTTPResponseMessage(
                status: request.method == "POST" ? 201 : 200,
                headers: HTTPHeaders([("Content-Type", "application/json"), ("ETag", "\"v7\""), ("X-Request-Target", request.target)]),
                body: body)
        }
    }

    private func fetch(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        let (data, response) = try await session.data(for: request)
        return (data, try XCTUnwrap(response as? HTTPURLResponse))
    }

    func testURLSessionGet() async throws {
        let recorder = RequestRecorder()
        let server = try startServer(self, handler: jsonHandler(recorder))
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(server.port)/users/usr_1?expand=roles&q=a%20b")!)
        request.setValue("Bearer t0k", forHTTPHeaderField: "Authorization")
        request.setValue("2024-06-01", forHTTPHeaderField: "Hub-Version")
        let (data, response) = try await fetch(request)

        XCTAssertEqual(response.statusCode, 200)
        XCTAssertEqual(String(decoding: data, as: UTF8.self), #"{"path":"/users/usr_1"}"#)
        XCTAssertEqual(response.value(forHTTPHeaderField: "Content-Type"), "application/json")
        XCTAssertEqual(response.value(forHTTPHeaderField: "ETag"), "\"v7\"")
        XCTAssertEqual(response.value(forHTTPHeaderField: "X-Request-Target"), "/users/usr_1?expand=roles&q=a%20b")
        XCTAssertEqual(response.value(forHTTPHeaderField: "Content-Length"), "23")

        let seen = try XCTUnwrap(recorder.requests.first)
        XCTAssertEqual(seen.method, "GET")
        XCTAssertEqual(seen.target, "/users/usr_1?expand=roles&q=a%20b")
        XCTAssertEqual(seen.headers.fields.first { $0.name == "Authorization" }?.value, "Bearer t0k")
        XCTAssertEqual(seen.headers.fields.first { $0.name == "Hub-Version" }?.value, "2024-06-01")
        XCTAssertEqual(seen.body, Data())
    }

    func testURLSessionPostWithBody() async throws {
        let recorder = RequestRecorder()
        let server = try startServer(self, handler: jsonHandler(recorder))
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(server.port)/roles")!)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("key-123", forHTTPHeaderField: "Idempotency-Key")
        let payload = Data(#"{"name":"auditor","grants":["audit.view"],"note":"é ✓"}"#.utf8)
        request.httpBody = payload
        let (data, response) = try await fetch(request)

        XCTAssertEqual(response.statusCode, 201)
        XCTAssertEqual(data, Data(#"{"received":"# .utf8) + payload + Data("}".utf8))
        XCTAssertEqual(response.value(forHTTPHeaderField: "Content-Type"), "application/json")
        XCTAssertEqual(response.value(forHTTPHeaderField: "Content-Length"), "\(data.count)")

        let seen = try XCTUnwrap(recorder.requests.first)
        XCTAssertEqual(seen.method, "POST")
        XCTAssertEqual(seen.target, "/roles")
        XCTAssertEqual(seen.body, payload)
        XCTAssertEqual(seen.headers.fields.first { $0.name == "Idempotency-Key" }?.value, "key-123")
        XCTAssertEqual(seen.headers["content-length"], "\(payload.count)")
    }

    func testURLSessionReusesTheConnection() async throws {
        let server = try startServer(self, handler: jsonHandler(RequestRecorder()))
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        for i in 0..<5 {
            let url = URL(string: "http://127.0.0.1:\(server.port)/n/\(i)")!
            let (data, _) = try await session.data(for: URLRequest(url: url))
            XCTAssertEqual(String(decoding: data, as: UTF8.self), #"{"path":"/n/\#(i)"}"#)
        }
        XCTAssertEqual(server.openConnectionCount, 1)
    }

    private func curl(_ arguments: [String]) throws -> String {
        let (status, output) = try runCurl(arguments)
        XCTAssertEqual(status, 0, "curl \(arguments)")
        return output
    }

    func testCurlGet() throws {
        let recorder = RequestRecorder()
        let server = try startServer(self, handler: jsonHandler(recorder))
        let output = try curl(["-H", "X-Trace-ID: Tr-1", "http://127.0.0.1:\(server.port)/users?limit=2"])
        XCTAssertEqual(
            output,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nETag: \"v7\"\r\nX-Request-Target: /users?limit=2\r\n"
                + "Content-Length: 17\r\n\r\n" + #"{"path":"/users"}"#)
        let seen = try XCTUnwrap(recorder.requests.first)
        XCTAssertEqual(seen.target, "/users?limit=2")
        XCTAssertEqual(seen.headers.fields.map(\.name), ["Host", "User-Agent", "Accept", "X-Trace-ID"])
        XCTAssertEqual(seen.headers["Host"], "127.0.0.1:\(server.port)")
        XCTAssertEqual(seen.headers["X-Trace-ID"], "Tr-1")
    }

    func testCurlPostWithBody() throws {
        let recorder = RequestRecorder()
        let server = try startServer(self, handler: jsonHandler(recorder))
        let output = try curl([
            "-X", "POST", "-H", "Content-Type: application/json", "--data-binary", #"{"a":1}"#,
            "http://127.0.0.1:\(server.port)/things",
        ])
        XCTAssertEqual(
            output,
            "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nETag: \"v7\"\r\nX-Request-Target: /things\r\n"
                + "Content-Length: 20\r\n\r\n" + #"{"received":{"a":1}}"#)
        let seen = try XCTUnwrap(recorder.requests.first)
        XCTAssertEqual(seen.method, "POST")
        XCTAssertEqual(seen.body, Data(#"{"a":1}"#.utf8))
        XCTAssertEqual(seen.headers["Content-Type"], "application/json")
        XCTAssertEqual(seen.headers["Content-Length"], "7")
    }

    func testCurlLargeUploadWithExpectContinue() throws {
        let recorder = RequestRecorder()
        let server = try startServer(self, handler: jsonHandler(recorder))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("httpkit-upload-\(UUID()).bin")
        let payload = Data((0..<2_000_000).map { UInt8(truncatingIfNeeded: $0 % 251) })
        try payload.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let output = try curl([
            "-H", "Expect: 100-continue", "--data-binary", "@\(file.path)", "http://127.0.0.1:\(server.port)/upload",
        ])
        // Without the interim response curl would wait a second and send the body anyway;
        // its output shows whether the server sent one.
        XCTAssertTrue(output.hasPrefix("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\n"), String(output.prefix(200)))
        XCTAssertEqual(recorder.requests.first?.body, payload)
    }

    func testCurlHTTP10() throws {
        let server = try startServer(self, handler: jsonHandler(RequestRecorder()))
        let output = try curl(["--http1.0", "http://127.0.0.1:\(server.port)/old"])
        XCTAssertEqual(
            output,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nETag: \"v7\"\r\nX-Request-Target: /old\r\n"
                + "Content-Length: 15\r\nConnection: close\r\n\r\n" + #"{"path":"/old"}"#)
    }
}
