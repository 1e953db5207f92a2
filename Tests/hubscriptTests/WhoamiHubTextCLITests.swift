import Foundation
import XCTest

/// whoami's failure line holds the Hub's own words: they stay on that one line, their
/// line breaks and terminal controls escaped, so a Hub cannot forge lines of the report.
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
}
