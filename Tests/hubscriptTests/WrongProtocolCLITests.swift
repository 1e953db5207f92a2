import Foundation
import XCTest

/// A profile whose hub_url says `https://` for a server that speaks plain HTTP (the
/// served sandbox, which never speaks TLS): the run fails at once, saying what is wrong
/// and what to do, not after libcurl busy-polled a CPU for three read timeouts (~90 s).
final class WrongProtocolCLITests: XCTestCase {
    func testAnHTTPSProfileOnThePlainHTTPSandboxFailsAtOnceSayingToUseHTTP() throws {
        let cli = try CLIHarness(testCase: self)
        let hubState = cli.root.appendingPathComponent("hub-state")
        try cli.resetSandbox(state: hubState)
        let server = try ServedSandbox(cli, state: hubState, faults: "none")
        defer { server.stop() }
        let port = try XCTUnwrap(server.url.split(separator: ":").last)
        let config = try cli.file("tls.config.lua", """
            return { profiles = { tls = { hub_url = "https://127.0.0.1:\(port)", api_key = "satk_test_jobs_sandbox_0000000000000000" } } }
            """)
        try cli.file("ada.lua", """
            recipe { name = "ada", needs = { "users.list" } }
            print(hub.users.get("usr_ada").id)
            """)

        let started = Date()
        let result = try cli.run(["run", "ada.lua", "--config", config, "--profile", "tls", "--verbose"], cwd: cli.root)
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertEqual(result.status, 7)

        let stable = result.stderr
            .replacingOccurrences(of: #"run_[0-9TZ]+_[0-9a-f]+"#, with: "RUN", options: .regularExpression)
            .replacingOccurrences(of: #" in [0-9.]+ s\n"#, with: " in T s\n", options: .regularExpression)
            .replacingOccurrences(of: #"\([0-9]+ ms\)"#, with: "(N ms)", options: .regularExpression)
            .replacingOccurrences(of: cli.root.path, with: "DIR")
        let message = "https://127.0.0.1:\(port): the server answered in plain HTTP (HTTP/1.1 400 Bad Request), not TLS; "
            + "for a plain-HTTP loopback server such as `hubscript sandbox serve`, use http://127.0.0.1:\(port)"
        // One attempt (one "failed" line), since the same server would answer the same
        // way; the profile's mistake, not the recipe's: no traceback.
        XCTAssertEqual(stable, """
            run RUN started; if it stops, resume it with: hubscript runs resume RUN --config DIR/tls.config.lua --state-dir DIR/state
            hub: GET /users/usr_ada failed: \(message) (N ms)
            error: profile 'tls': the server does not speak the protocol of hub_url (\(message)); fix hub_url in profile 'tls'
            stopped: run RUN — 1 reads, 0 writes in T s

            """)
        XCTAssertEqual(result.stdout, "")
        XCTAssertLessThan(elapsed, 5, "the misconfiguration took \(elapsed) s to report")
    }
}
