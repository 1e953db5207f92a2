import Foundation
import XCTest

/// `sandbox reset` while a `sandbox serve` of the same state directory runs: the reset
/// happens, and stderr warns that the server keeps its old data. Only a live server
/// counts (the serve lock is an `flock` the kernel drops when the process dies).
final class SandboxResetWarningTests: XCTestCase {
    /// Starts `sandbox serve` on the harness's state directory; returns it and its Hub URL.
    private func serve(_ cli: CLIHarness, _ extra: [String] = [], state: URL? = nil) throws -> (Process, String) {
        let (p, out, _) = cli.process(["sandbox", "serve", "--port", "0", "--dispatch-port", "0"] + extra, state: state)
        try p.run()
        var text = ""
        let deadline = Date().addingTimeInterval(30)
        while !text.contains("Ctrl-C stops."), Date() < deadline {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        let url = try XCTUnwrap(text.split(separator: " ").first { $0.hasPrefix("http://127.0.0.1:") }, text)
        return (p, String(url))
    }

    private func stop(_ server: Process, _ signal: Int32) {
        kill(server.processIdentifier, signal)
        server.waitUntilExit()
    }

    @discardableResult
    private func reset(_ cli: CLIHarness) throws -> CLIHarness.Result {
        try cli.run(["sandbox", "reset", "--users", "5", "--audit-events", "10"], expect: 0)
    }

    func testResetWarnsWhileAServerOfTheSameStateRuns() throws {
        let cli = try CLIHarness(testCase: self)
        XCTAssertEqual(try reset(cli).stderr, "")
        let (server, url) = try serve(cli)
        let during = try reset(cli)
        XCTAssertEqual(during.stderr, """
            hubscript sandbox reset: warning: a 'hubscript sandbox serve' (pid \(server.processIdentifier), \(url)) \
            is serving this state directory and keeps its old data; stop it (Ctrl-C) and start it again to serve the new one

            """)
        XCTAssertTrue(during.stdout.hasPrefix("sandbox reset: "), during.stdout)
        XCTAssertTrue(during.stdout.hasSuffix(" seeded with seed 1 (5 users, 10 audit events)\n"), during.stdout)
        stop(server, SIGTERM)
        XCTAssertEqual(server.terminationStatus, 0)
        XCTAssertEqual(try reset(cli).stderr, "", "a stopped server does not count")
    }

    func testAKilledServerDoesNotCount() throws {
        let cli = try CLIHarness(testCase: self)
        try reset(cli)
        let (server, _) = try serve(cli)
        stop(server, SIGKILL)
        let lockFile = cli.stateDir.appendingPathComponent("sandbox/hub.sqlite.serve-lock")
        XCTAssertTrue(FileManager.default.fileExists(atPath: lockFile.path), "the killed server's lock file stays")
        XCTAssertEqual(try reset(cli).stderr, "")
    }

    func testAnInMemoryServerOrAnotherStateDirectoryDoesNotCount() throws {
        let cli = try CLIHarness(testCase: self)
        try reset(cli)
        let (memory, _) = try serve(cli, ["--memory", "--users", "5", "--audit-events", "10"])
        defer { stop(memory, SIGTERM) }
        let other = cli.root.appendingPathComponent("other-state")
        try cli.run(["sandbox", "reset", "--users", "5", "--audit-events", "10"], state: other, expect: 0)
        let (elsewhere, _) = try serve(cli, state: other)
        defer { stop(elsewhere, SIGTERM) }
        XCTAssertEqual(try reset(cli).stderr, "")
    }
}
