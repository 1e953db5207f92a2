import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `--max-connections` and `--max-connections-per-address` of the serving commands:
/// checked before anything starts, and in force once serving.
final class ServerLimitOptionsCLITests: XCTestCase {
    func testBadConnectionCapsAreUsageErrors() throws {
        let cli = try CLIHarness(testCase: self)
        let cases: [([String], String)] = [
            (["listen", "--max-connections", "abc"],
             "hubscript listen: --max-connections takes a whole number from 1 to 65536, got 'abc'\n"),
            (["listen", "--max-connections", "0"],
             "hubscript listen: --max-connections takes a whole number from 1 to 65536, got '0'\n"),
            (["listen", "--max-connections-per-address", "-1"],
             "hubscript listen: --max-connections-per-address takes a whole number from 0 (no cap of its own) to 65536, got '-1'\n"),
            (["sandbox", "serve", "--max-connections", "70000"],
             "hubscript sandbox serve: --max-connections takes a whole number from 1 to 65536, got '70000'\n"),
            (["jobs", "serve", "--max-connections", "5"],
             "hubscript jobs serve: --max-connections needs --listen PORT (the webhook receiver's port)\n"),
        ]
        for (args, message) in cases {
            let r = try cli.run(args)
            XCTAssertEqual(r.status, 2, args.joined(separator: " "))
            XCTAssertEqual(r.stdout, "", args.joined(separator: " "))
            let command = args[0] == "listen" ? "listen" : "\(args[0]) \(args[1])"
            XCTAssertEqual(r.stderr, message + "Run 'hubscript \(command) --help' for usage.\n", args.joined(separator: " "))
        }
    }

    func testServedSandboxHonoursTheConnectionCaps() throws {
        let cli = try CLIHarness(testCase: self)
        let hubState = cli.root.appendingPathComponent("hub-state")
        try cli.resetSandbox(state: hubState)
        let served = try ServedSandbox(cli, state: hubState, faults: "none",
                                       extraArguments: ["--max-connections", "2", "--max-connections-per-address", "1"])
        defer { served.stop() }
        let port = UInt16(try XCTUnwrap(URL(string: served.url)?.port))
        // One connection from 127.0.0.2 holds its address's only slot.
        let held = try XCTUnwrap(connect(port: port, from: "127.0.0.2"))
        defer { close(held) }
        _ = "GET /health HTTP/1.1\r\n".withCString { send(held, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        let second = try XCTUnwrap(connect(port: port, from: "127.0.0.2"))
        defer { close(second) }
        let body = #"{"error":{"code":"too_many_connections","message":"this address already holds 1 open connection, the most one address may hold: finish or close one, then retry"}}"#
        XCTAssertEqual(readAll(second), "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
                       + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body)
    }

    private func connect(port: UInt16, from source: String) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = port.bigEndian
        remote.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var tv = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        guard bound == 0, connected == 0 else { close(fd); return nil }
        return fd
    }

    private func readAll(_ fd: Int32) -> String {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while case let n = buffer.withUnsafeMutableBytes({ recv(fd, $0.baseAddress, $0.count, 0) }), n > 0 { out += buffer[0..<n] }
        return String(decoding: out, as: UTF8.self)
    }
}
