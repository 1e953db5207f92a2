import Foundation
import XCTest

/// A recipe that loops for ever is stopped at its deadline wherever it runs — `run`,
/// `jobs run`, `jobs run-due`, `jobs serve` — and only it: the scheduler and the other
/// fires go on.
final class DeadlineEverywhereCLITests: XCTestCase {
    static let loop = """
        recipe { name = "loop", version = "1.0.0", description = "Test fixture: never ends." }
        while true do end
        """

    var cli: CLIHarness!
    var config: String!

    override func setUpWithError() throws {
        cli = try CLIHarness(testCase: self)
        try cli.file("recipes/loop.lua", Self.loop)
        try cli.file("recipes/notify.lua", JobsCLITests.notify)
        try cli.resetSandbox()
        config = try cli.file("hubscript.config.lua", """
            return { profiles = { dev = { sandbox = true } }, jobs = {
              loop = { recipe = "recipes/loop.lua", schedule = "* * * * *", timeout = 1 },
              tick = { recipe = "recipes/notify.lua", schedule = "* * * * *" },
            } }
            """)
    }

    static let timeoutReason = "limit exceeded: timeout (1 s); raise it with --timeout or limits.timeout in the recipe manifest"

    func history() throws -> [[String: Any]] {
        let r = try cli.run(["jobs", "history", "--json", "--limit", "100", "--config", config])
        XCTAssertEqual(r.status, 0, r.output)
        return r.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    func row(_ rows: [[String: Any]], _ runID: String) -> [String: Any]? {
        rows.first { $0["run_id"] as? String == runID && $0["status"] as? String != "skipped" }
    }

    func testRunStopsTheLoopAtItsDeadline() throws {
        let r = try cli.run(["run", cli.root.appendingPathComponent("recipes/loop.lua").path, "--timeout", "1"])
        XCTAssertEqual(r.status, 4, r.output)
        XCTAssertTrue(r.stderr.contains("limit exceeded: timeout (1 s)"), r.stderr)
    }

    func testJobsRunStopsTheLoopAtItsDeadline() throws {
        let r = try cli.run(["jobs", "run", "loop", "--now", "2026-01-01T10:00:05Z", "--config", config])
        XCTAssertEqual(r.status, 4, r.output)
        let fired = try history().filter { ($0["run_id"] as? String ?? "").hasPrefix("loop@") }
        XCTAssertEqual(fired.count, 1, "\(fired)")
        XCTAssertEqual(fired.first?["status"] as? String, "failed")
        XCTAssertEqual(fired.first?["reason"] as? String, Self.timeoutReason)
    }

    func testJobsRunDueStopsTheLoopAndRunsTheOtherJob() throws {
        let r = try cli.run(["jobs", "run-due", "--now", "2026-01-01T10:00:05Z", "--config", config])
        XCTAssertEqual(r.status, 1, r.output)
        let rows = try history()
        XCTAssertEqual(row(rows, "loop@2026-01-01T10:00:00Z")?["status"] as? String, "failed")
        XCTAssertEqual(row(rows, "loop@2026-01-01T10:00:00Z")?["reason"] as? String, Self.timeoutReason)
        XCTAssertEqual(row(rows, "tick@2026-01-01T10:00:00Z")?["status"] as? String, "succeeded")
    }

    /// Fires run on the scheduler's pool threads: the loop is stopped there at its
    /// deadline, the scheduler goes on (the next minute's fires run), and SIGTERM ends it
    /// with 0.
    func testJobsServeStopsTheLoopAndGoesOn() throws {
        let (p, stop) = try cli.startDrained(["jobs", "serve", "--now", "2026-01-01T10:00:58Z", "--config", config])
        defer { stop() }
        let deadline = Date().addingTimeInterval(40)
        var rows: [[String: Any]] = []
        while Date() < deadline && p.isRunning {
            rows = try history()
            if row(rows, "loop@2026-01-01T10:01:00Z")?["status"] as? String == "failed" { break }
            usleep(100_000)
        }
        XCTAssertTrue(p.isRunning, "the scheduler ended (status \(p.terminationStatus))")
        for id in ["loop@2026-01-01T10:00:00Z", "loop@2026-01-01T10:01:00Z"] {
            XCTAssertEqual(row(rows, id)?["status"] as? String, "failed", "\(id): \(rows)")
            XCTAssertEqual(row(rows, id)?["reason"] as? String, Self.timeoutReason, id)
        }
        XCTAssertEqual(row(rows, "tick@2026-01-01T10:00:00Z")?["status"] as? String, "succeeded", "\(rows)")
        kill(p.processIdentifier, SIGTERM)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationReason, .exit)
        XCTAssertEqual(p.terminationStatus, 0)
    }

    /// Every due fire runs under `--concurrency` (the bound itself: `FirePoolTests`),
    /// and a value out of range is refused.
    func testRunDueWithAConcurrencyRunsEveryFire() throws {
        let jobs = (0..<12).map { #"j\#($0) = { recipe = "recipes/notify.lua", schedule = "* * * * *" },"# }.joined(separator: "\n")
        config = try cli.file("hubscript.config.lua", "return { profiles = { dev = { sandbox = true } }, jobs = { \(jobs) } }")
        try cli.run(["jobs", "run-due", "--now", "2026-01-01T10:00:05Z", "--concurrency", "2", "--config", config], expect: 0)
        XCTAssertEqual(try history().filter { $0["status"] as? String == "succeeded" }.count, 12)
        for bad in ["0", "-1", "x", "257"] {
            let r = try cli.run(["jobs", "run-due", "--concurrency", bad, "--config", config])
            XCTAssertEqual(r.status, 2)
            XCTAssertEqual(r.stderr, """
                hubscript jobs run-due: --concurrency takes a whole number from 1 to 256, got '\(bad)'
                Run 'hubscript jobs run-due --help' for usage.

                """)
        }
    }
}
