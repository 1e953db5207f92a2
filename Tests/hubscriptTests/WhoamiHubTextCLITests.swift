import Foundation
import XCTest

/// A failure line holding the Hub's own words (whoami's, a run's error) keeps them on
/// that one line, their line breaks and terminal controls escaped, so a Hub cannot
/// forge lines of the report.
extension HubReachFakeHubCLITests {
    func testWhoamiKeepsTheHubsErrorTextOnItsOneLine() throws {
        let config = try cli.file("odd.config.lua", """
            return { profiles = { odd = { hub_url = "\(url)", api_key = "satk_test_odd", rate_limit_per_minute = 0 } } }
            """)
        let r = try cli.run(["whoami", "--config", config])
        XCTAssertEqual(r.stdout, "")
        XCTAssertEqual(r.stderr.filter { $0 == "\n" }.count, 1, r.stderr)
        XCTAssertTrue(r.stderr.hasPrefix(#"hubscript whoami: profile 'odd': odd: odd\r\n\e[2Jprofile      forged (HTTP 409)"#), r.stderr)
        XCTAssertEqual(r.status, 1)
    }

    func testARunsErrorKeepsTheHubsTextOnItsOneLine() throws {
        let config = try cli.file("odd-run.config.lua", """
            return { profiles = { odd = { hub_url = "\(url)", api_key = "satk_test_odd", api_key_permissions = { "users.list" },
                                          rate_limit_per_minute = 0 } } }
            """)
        try cli.file("count.lua", HubReachCLITests.listing)
        let r = try cli.run(["run", "count.lua", "--config", config, "--quiet"])
        let errors = r.stderr.split(separator: "\n", omittingEmptySubsequences: false).filter { $0.hasPrefix("error: ") }
        XCTAssertEqual(errors.count, 1, r.stderr)
        XCTAssertTrue(r.stderr.hasPrefix(#"error: count.lua:3: odd: odd\r\n\e[2Jprofile      forged"# + "\nstack traceback:\n"), r.stderr)
        XCTAssertFalse(r.stderr.contains("\nprofile      forged"), r.stderr)
        XCTAssertEqual(r.status, 1)
    }
}
