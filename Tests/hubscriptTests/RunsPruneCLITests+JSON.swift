import Foundation
import XCTest

/// `hubscript runs prune --json`: the report as one object a script can read, for a dry
/// run and a prune, with every reason a run was kept.
extension RunsPruneCLITests {
    func testJSONReportsTheSameCountsAsTheTextAndEveryKeptReason() throws {
        XCTAssertEqual(try cli.run(["run", "tidy.lua"]).status, 0)
        XCTAssertEqual(try cli.run(["run", "fail.lua"]).status, 1)
        Thread.sleep(forTimeInterval: 0.01)

        for dryRun in [true, false] {
            let result = try cli.run(["runs", "prune", "--older-than", "0m", "--json"] + (dryRun ? ["--dry-run"] : []), expect: 0)
            let lines = result.stdout.split(separator: "\n")
            XCTAssertEqual(lines.count, 1, result.stdout)
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
            XCTAssertEqual(object["type"] as? String, "prune")
            XCTAssertEqual(object["dry_run"] as? Bool, dryRun)
            XCTAssertEqual(object["older_than"] as? String, "0m")
            XCTAssertNotNil((object["started_before"] as? String).flatMap { $0.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$"#, options: .regularExpression) })
            XCTAssertEqual(object["runs"] as? Int, 1)
            XCTAssertEqual(object["writes"] as? Int, 2)
            XCTAssertEqual(object["reads"] as? Int, 0)
            XCTAssertEqual(object["fires"] as? Int, 0)
            XCTAssertEqual(object["trigger_events"] as? Int, 0)
            XCTAssertEqual(object["export_folders"] as? Int, 1)
            XCTAssertEqual(object["export_bytes"] as? Int, 11)
            XCTAssertEqual(object["finished_from_earlier"] as? Int, 0)
            XCTAssertEqual(object["kept"] as? [String: Int], ["running": 0, "resumable": 1, "plan": 0, "referenced": 0])
            if dryRun { XCTAssertEqual(object["journal_bytes_freed"] as? Int, 0) }
            XCTAssertEqual(result.stderr, "")
        }
        // The prune removed the succeeded run; the failed one is kept.
        XCTAssertEqual(try runIDs().count, 1)
    }
}
