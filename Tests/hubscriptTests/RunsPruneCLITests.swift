import Foundation
import XCTest

/// `hubscript runs prune` as an operator meets it: what it prints, what a dry run
/// leaves, what it keeps, and the mistakes it refuses.
final class RunsPruneCLITests: XCTestCase {
    var cli: CLIHarness!

    override func setUpWithError() throws {
        cli = try CLIHarness(testCase: self)
        try cli.file("tidy.lua", """
            recipe { name = "tidy", needs = { "users.manage", "users.list" } }
            export.csv("users", { { id = "usr_1" } })
            local n = 0
            for u in hub.users.list() do hub.users.suspend(u.id, { reason = "tidy" }); n = n + 1; if n == 2 then break end end
            """)
        try cli.file("fail.lua", """
            recipe { name = "fail", needs = { "users.manage" } }
            error("boom")
            """)
    }

    /// The printed report with its moment (`started before …`) replaced by `T`.
    func report(_ text: String) -> String {
        text.replacingOccurrences(of: #"started before \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"#, with: "started before T", options: .regularExpression)
    }

    func runIDs() throws -> [String] {
        try cli.run(["runs", "list"], expect: 0).stdout.split(separator: "\n").dropFirst().map { String($0.prefix(while: { $0 != " " })) }
    }

    func testADryRunShowsWhatGoesAndThePruneRemovesItKeepingAFailedRun() throws {
        XCTAssertEqual(try cli.run(["run", "tidy.lua"]).status, 0)
        XCTAssertEqual(try cli.run(["run", "fail.lua"]).status, 1)
        let all = try runIDs()
        XCTAssertEqual(all.count, 2)
        let exports = cli.stateDir.appendingPathComponent("runs")
        let folders = try FileManager.default.contentsOfDirectory(atPath: exports.path)
        XCTAssertEqual(folders.count, 1)
        Thread.sleep(forTimeInterval: 0.01)

        let dry = try cli.run(["runs", "prune", "--older-than", "0m", "--dry-run"], expect: 0)
        XCTAssertEqual(report(dry.stdout), """
            would remove, of runs older than 0m (started before T) — nothing was removed (--dry-run):
              runs           1
              writes         2
              reads          0
              fires          0
              trigger events 0
              export folders 1 (11 bytes)
            kept 1 older runs: 1 can still be resumed

            """)
        XCTAssertEqual(try runIDs(), all)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: exports.path), folders)

        let done = try cli.run(["runs", "prune", "--older-than", "0m"], expect: 0)
        XCTAssertEqual(report(done.stdout), """
            removed, of runs older than 0m (started before T):
              runs           1
              writes         2
              reads          0
              fires          0
              trigger events 0
              export folders 1 (11 bytes)
              journal        0 bytes given back to the disk
            kept 1 older runs: 1 can still be resumed

            """.replacingOccurrences(of: "0 bytes given", with: done.stdout.contains("  journal        0 bytes") ? "0 bytes given" : "\(journalLine(done.stdout)) given"))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: exports.path), [])
        let left = try runIDs()
        XCTAssertEqual(left.count, 1)
        XCTAssertEqual(try cli.run(["runs", "show", left[0]], expect: 0).stdout.contains("fail.lua"), true)

        // Given up on with --keep-failed, the failed run goes too.
        let failed = try cli.run(["runs", "prune", "--older-than", "0m", "--keep-failed", "0m"], expect: 0)
        XCTAssertTrue(report(failed.stdout).hasPrefix("removed, of runs older than 0m (started before T):\n  runs           1\n"), failed.stdout)
        XCTAssertEqual(try cli.run(["runs", "list"], expect: 0).stdout, "no runs yet\n")
    }

    /// The journal line's amount (`N bytes`, `N KB`).
    func journalLine(_ text: String) -> String {
        let line = text.split(separator: "\n").first { $0.hasPrefix("  journal ") } ?? ""
        return line.dropFirst("  journal        ".count).replacingOccurrences(of: " given back to the disk", with: "")
    }

    func testTheConfigurationsRetentionIsTheDefault() throws {
        XCTAssertEqual(try cli.run(["run", "tidy.lua"]).status, 0)
        Thread.sleep(forTimeInterval: 0.01)
        let config = try cli.file("c.lua", #"return { retention = { older_than = "0m" } }"#)
        let kept = try cli.run(["runs", "prune", "--older-than", "1d", "--config", config], expect: 0)
        XCTAssertTrue(report(kept.stdout).hasPrefix("removed, of runs older than 1d (started before T):\n  runs           0\n"), kept.stdout)
        let done = try cli.run(["runs", "prune", "--config", config], expect: 0)
        XCTAssertTrue(report(done.stdout).hasPrefix("removed, of runs older than 0m (started before T):\n  runs           1\n"), done.stdout)
        let broken = try cli.file("b.lua", #"return { retention = { older_than = "3 months" } }"#)
        let refused = try cli.run(["runs", "prune", "--config", broken], expect: 2)
        XCTAssertEqual(refused.stderr, "hubscript runs prune: config \(broken): retention.older_than must be an age such as 90d, 12h, 2w or 30m (a whole number and m, h, d or w) in quotes, got \"3 months\"\n")
    }

    func testMistakesAreRefusedAndNothingIsRemoved() throws {
        XCTAssertEqual(try cli.run(["run", "tidy.lua"]).status, 0)
        let usage = "Run 'hubscript runs prune --help' for usage.\n"
        for (args, message) in [
            ([], #"runs prune needs --older-than AGE (such as 90d), or retention = { older_than = "90d" } in the configuration"#),
            (["--older-than", "90"], "--older-than takes an age such as 90d, 12h, 2w or 30m (a whole number and m, h, d or w), got '90'"),
            (["--older-than", "0m", "--keep-failed", "x"], "--keep-failed takes an age such as 90d, 12h, 2w or 30m (a whole number and m, h, d or w), got 'x'"),
            (["--older-than", "90d", "--keep-failed", "30d"], "--keep-failed (30d) is shorter than --older-than (90d): runs that did not succeed are kept at least as long as the others"),
            (["--older-than", "0m", "--status", "succeeded,done"], "--status takes succeeded, failed, stopped or interrupted (comma-separated), got 'done'"),
            (["--older-than", "0m", "all"], "runs prune takes no arguments (select runs with --older-than, --status, --recipe, --job)"),
        ] {
            let r = try cli.run(["runs", "prune"] + args, expect: 2)
            XCTAssertEqual(r.stderr, "hubscript runs prune: \(message)\n" + usage, args.joined(separator: " "))
            XCTAssertEqual(r.stdout, "")
        }
        XCTAssertEqual(try runIDs().count, 1)
    }

    func testStatusAndRecipeNarrowWhatGoes() throws {
        XCTAssertEqual(try cli.run(["run", "tidy.lua"]).status, 0)
        XCTAssertEqual(try cli.run(["run", "fail.lua"]).status, 1)
        Thread.sleep(forTimeInterval: 0.01)
        let other = try cli.run(["runs", "prune", "--older-than", "0m", "--keep-failed", "0m", "--recipe", "other.lua"], expect: 0)
        XCTAssertTrue(other.stdout.contains("  runs           0\n"), other.stdout)
        let failed = try cli.run(["runs", "prune", "--older-than", "0m", "--keep-failed", "0m", "--status", "failed"], expect: 0)
        XCTAssertTrue(failed.stdout.contains("  runs           1\n  writes         0\n"), failed.stdout)
        let left = try runIDs()
        XCTAssertEqual(left.count, 1)
        let byRecipe = try cli.run(["runs", "prune", "--older-than", "0m", "--recipe", "tidy.lua"], expect: 0)
        XCTAssertTrue(byRecipe.stdout.contains("  runs           1\n  writes         2\n"), byRecipe.stdout)
    }
}
