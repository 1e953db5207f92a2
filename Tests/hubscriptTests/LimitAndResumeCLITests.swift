import Foundation
import XCTest

/// The write limit and `hubscript runs resume` of a changed recipe, through the CLI
/// (GatingTests covers the same in process).
final class LimitAndResumeCLITests: XCTestCase {
    func offboardCopy(_ cli: CLIHarness) throws -> String {
        let source = try String(contentsOf: CLIHarness.repoRoot.appendingPathComponent("recipes/offboard.lua"), encoding: .utf8)
        try cli.file("offboard.lua", source)
        return "offboard.lua"
    }

    func auditCount(_ cli: CLIHarness) throws -> Int {
        try cli.sandbox().all("/audit-events", "target_user_id=usr_ada").count
    }

    func testMaxWritesStopsBeforeTheFirstExcessWriteWithExitCode4() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.resetSandbox()
        let recipe = try offboardCopy(cli)
        let before = try auditCount(cli)
        let r = try cli.run([recipe, "--param", "user=ada@example.com", "--max-writes", "3", "--run-id", "run_limited"], expect: 4)
        XCTAssertTrue(r.stderr.contains("""
            error: limit exceeded: writes: the recipe's limit is 3 (limits.writes / --max-writes); stopped before write 4: \
            PATCH /entitlements/ent_ada_analytics

            """), r.stderr)
        XCTAssertTrue(r.stderr.contains("stopped: run run_limited — "), r.stderr)
        XCTAssertEqual(try auditCount(cli) - before, 3, "2 session revocations and the suspension, nothing more")
        let show = try cli.run(["runs", "show", "run_limited"], expect: 0)
        XCTAssertTrue(show.stdout.contains("mode      run, stopped, attempts 1"), show.stdout)
        XCTAssertEqual(show.stdout.components(separatedBy: " done ").count - 1, 3, show.stdout)
    }

    func testResumeOfAChangedRecipeIsRefusedWithoutForce() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.resetSandbox()
        let recipe = try offboardCopy(cli)
        try cli.run([recipe, "--param", "user=ada@example.com", "--max-writes", "3", "--run-id", "run_changed"], expect: 4)
        let before = try auditCount(cli)

        let url = cli.root.appendingPathComponent(recipe)
        let original = try String(contentsOf: url, encoding: .utf8)
        try Data(original.replacingOccurrences(of: "limits = { writes = 200 }", with: "limits = { writes = 100 }").utf8).write(to: url)
        let show = try cli.run(["runs", "show", "run_changed"], expect: 0)
        let oldPrefix = try XCTUnwrap(show.stdout.range(of: "(sha256 ")).upperBound
        let old = String(show.stdout[oldPrefix...].prefix(12))

        let refused = try cli.run(["runs", "resume", "run_changed"], expect: 2)
        XCTAssertTrue(refused.stderr.contains("error: run run_changed was started with another version of offboard.lua (sha256 \(old)…, now "),
                      refused.stderr)
        XCTAssertTrue(refused.stderr.contains("…); resuming could repeat or skip changes. Pass --force to resume anyway, or start a new run.\n"),
                      refused.stderr)
        XCTAssertEqual(try auditCount(cli), before, "nothing sent")

        let forced = try cli.run(["runs", "resume", "run_changed", "--force", "--max-writes", "200"], expect: 0)
        XCTAssertTrue(forced.stderr.contains("done: run run_changed — "), forced.stderr)
        // The resume is served the first attempt's reads from the run's record, so it makes
        // the same decisions: its 3 writes replay and the 8 remaining ones are sent.
        XCTAssertTrue(forced.stderr.contains(" 8 writes, 3 replayed in "), forced.stderr)
        XCTAssertEqual(try auditCount(cli) - before, 8, "the remaining 8 changes")
        let after = try cli.run(["runs", "show", "run_changed"], expect: 0)
        XCTAssertTrue(after.stdout.contains("mode      run, succeeded, attempts 2"), after.stdout)
    }

    /// A run started with a relative recipe path keeps the recipe's absolute path in the
    /// journal, so `runs resume` from another working directory finds the recipe and
    /// makes the remaining writes.
    func testResumeFromAnotherDirectoryFindsTheRecipe() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.resetSandbox()
        let recipe = try offboardCopy(cli)
        try cli.run([recipe, "--param", "user=ada@example.com", "--max-writes", "3", "--run-id", "run_elsewhere"], expect: 4)
        let before = try auditCount(cli)
        let elsewhere = cli.root.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let r = try cli.run(["runs", "resume", "run_elsewhere", "--max-writes", "200"], cwd: elsewhere)
        XCTAssertEqual(r.status, 0, r.output)
        XCTAssertTrue(r.stderr.contains("done: run run_elsewhere — "), r.stderr)
        XCTAssertTrue(r.stderr.contains(" 8 writes, 3 replayed in "), r.stderr)
        XCTAssertEqual(try auditCount(cli) - before, 8, "the remaining 8 changes")
        let show = try cli.run(["runs", "show", "run_elsewhere"], expect: 0)
        XCTAssertTrue(show.stdout.contains("mode      run, succeeded, attempts 2"), show.stdout)
    }
}
