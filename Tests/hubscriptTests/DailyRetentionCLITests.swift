import Foundation
import XCTest

/// A serving command with `retention` in its configuration prunes at start when the
/// journal's last prune is a day old or more, and not again before a day has passed.
final class DailyRetentionCLITests: XCTestCase {
    func testTheConsolePrunesAtStartOnlyWhenTheLastPruneIsADayOld() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.file("tidy.lua", """
            recipe { name = "tidy", needs = { "users.manage", "users.list" } }
            export.csv("users", { { id = "usr_1" } })
            local n = 0
            for u in hub.users.list() do
              if u.status == "active" then hub.users.suspend(u.id, { reason = "tidy" }); n = n + 1 end
              if n == 2 then break end
            end
            """)
        let config = try cli.file("c.lua", #"return { retention = { older_than = "0m" } }"#)
        try cli.run(["run", "tidy.lua"], expect: 0)
        Thread.sleep(forTimeInterval: 0.01)

        /// Serves until the journal has no runs (at most 30 s), or for `seconds`.
        func serveOnce(untilEmpty: Bool, seconds: Double = 30) throws -> String {
            let console = try cli.live(["console", "--port", "0", "--config", config])
            XCTAssertNotNil(console.readLine())
            // The start-up prune runs on its own queue: wait (bounded) until the runs list says.
            let deadline = Date().addingTimeInterval(seconds)
            while try Date() < deadline && (!untilEmpty || cli.run(["runs", "list"]).stdout != "no runs yet\n") {
                Thread.sleep(forTimeInterval: 0.1)
            }
            Thread.sleep(forTimeInterval: 0.3)
            kill(console.process.processIdentifier, SIGTERM)
            XCTAssertTrue(console.waitForExit(within: 20))
            return console.stderr
        }
        let first = try serveOnce(untilEmpty: true)
        XCTAssertTrue(first.contains("console: retention (older_than 0m) pruned 1 runs, 2 writes, 1 export folders\n"), first)
        XCTAssertEqual(try cli.run(["runs", "list"], expect: 0).stdout, "no runs yet\n")

        // Pruned less than a day ago: the next start leaves a new run alone.
        try cli.run(["run", "tidy.lua"], expect: 0)
        let second = try serveOnce(untilEmpty: false, seconds: 2)
        XCTAssertFalse(second.contains("retention"), second)
        XCTAssertEqual(try cli.run(["runs", "list"], expect: 0).stdout.split(separator: "\n").count, 2)
    }
}
