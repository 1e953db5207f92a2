import Foundation
import HTTPKit
import XCTest

/// `sandbox serve --rate-limits off` reports no limit, so a run against it is paced only
/// by its profile's `rate_limit_per_minute`, if the profile sets one.
final class SandboxRateLimitsCLITests: XCTestCase {
    static let reads = """
        recipe {
          name = "read-many", version = "1.0.0", description = "Test fixture: reads one user 300 times.",
          needs = { "users.list" },
        }
        for _ = 1, 300 do hub.users.get("usr_ada") end
        print("read 300 times")
        """

    func testRateLimitsOffSendsNoRateLimitHeadersAndThreeHundredReadsAreNotPaced() throws {
        let cli = try CLIHarness(testCase: self)
        let hubState = cli.root.appendingPathComponent("hub-state")
        try cli.resetSandbox(state: hubState)
        let served = try ServedSandbox(cli, state: hubState, faults: "none", rateLimits: "off")
        defer { served.stop() }

        let url = try XCTUnwrap(URL(string: served.url))
        var headers = HTTPHeaders()
        headers.add("Substratal-Version", "1")
        headers.add("Authorization", "Bearer satk_test_jobs_sandbox_0000000000000000")
        let answer = try LoopbackHTTPClient().perform(
            HTTPRequestMessage(method: "GET", target: "/users/usr_ada", headers: headers),
            host: try XCTUnwrap(url.host), port: UInt16(try XCTUnwrap(url.port)), timeout: 10)
        XCTAssertEqual(answer.status, 200)
        XCTAssertEqual(answer.headers.fields.filter { $0.name.lowercased().hasPrefix("ratelimit-") }.map(\.name), [])

        try cli.file("read-many.lua", Self.reads)
        let config = try cli.file("unpaced.config.lua", """
            return { profiles = { served = { hub_url = "\(served.url)", api_key = "satk_test_jobs_sandbox_0000000000000000" } } }
            """)
        // At the 100 a minute a client used to learn from the headers, 300 reads took two
        // minutes; unpaced they take well under a second of work.
        let start = Date()
        let run = try cli.run(["run", cli.root.appendingPathComponent("read-many.lua").path, "--profile", "served",
                               "--config", config], expect: 0)
        XCTAssertEqual(run.stdout, "read 300 times\n")
        XCTAssertLessThan(Date().timeIntervalSince(start), 30, "300 reads were paced: \(run.output)")
    }
}
