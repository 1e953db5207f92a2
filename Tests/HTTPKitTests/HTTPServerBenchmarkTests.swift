import Foundation
import XCTest
@testable import HTTPKit

/// Keep-alive throughput of the server for a trivial handler, from 4 client threads in
/// this process. A benchmark, not a test: it prints the figure and asserts no speed.
/// Off unless `HUBSCRIPT_BENCH=1` (a release build gives the meaningful figure:
/// `HUBSCRIPT_BENCH=1 swift test -c release --filter HTTPServerBenchmarkTests`).
final class HTTPServerBenchmarkTests: XCTestCase {
    func testKeepAliveThroughput() throws {
        try XCTSkipUnless(ProcessInfo.processInfo.environment["HUBSCRIPT_BENCH"] != nil, "a benchmark: set HUBSCRIPT_BENCH=1")
        let server = try startServer(self) { _ in HTTPResponseMessage(status: 200, body: Data("ok".utf8)) }
        let counts = RequestRecorder()
        let group = DispatchGroup()
        let deadline = Date(timeIntervalSinceNow: 1)
        for _ in 0..<4 {
            group.enter()
            Thread {
                defer { group.leave() }
                guard let client = try? RawClient(port: server.port) else { return }
                var done = 0
                while Date() < deadline {
                    client.send("GET /ping HTTP/1.1\r\nHost: x\r\n\r\n")
                    guard client.readResponse() == "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok" else { break }
                    done += 1
                }
                counts.record(HTTPRequestMessage(method: "COUNT", target: "\(done)"))
            }.start()
        }
        XCTAssertEqual(group.wait(timeout: .now() + 10), .success)
        let total = counts.requests.compactMap { Int($0.target) }.reduce(0, +)
        print("HTTPServer keep-alive throughput: \(total) requests/s (4 in-process clients)")
    }
}
