import Foundation
import XCTest

/// A long-running `jobs serve` or `listen` stopped by SIGTERM closes the journal
/// cleanly: its write-ahead log checkpointed and the closed-clean marker left, so the
/// next command opens it without the integrity check; a trigger's run keeps its output.
final class CleanCloseCLITests: XCTestCase {
    /// Whether the marker beside `journal` matches the file and its log as they are now
    /// (what `Journal.closedCleanly` checks before skipping the integrity check).
    static func closedCleanly(_ journal: String) -> Bool {
        func stamp(_ path: String) -> String? {
            var s = stat()
            guard stat(path, &s) == 0 else { return nil }
            return "\(s.st_dev) \(s.st_ino) \(s.st_size) \(s.st_mtim.tv_sec).\(s.st_mtim.tv_nsec) \(s.st_ctim.tv_sec).\(s.st_ctim.tv_nsec)\n"
        }
        guard let file = stamp(journal), let marker = try? String(contentsOfFile: journal + "-closed", encoding: .utf8) else {
            return false
        }
        return marker == file + (stamp(journal + "-wal") ?? "no log\n")
    }

    static func size(_ path: String) -> Int {
        var s = stat()
        return stat(path, &s) == 0 ? Int(s.st_size) : -1
    }

    func testJobsServeStoppedBySIGTERMLeavesTheJournalClosedCleanly() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.resetSandbox()
        // Each fire says about 0.5 MB, so the log grows past what a clean close keeps.
        try cli.file("loud.lua", """
            recipe { name = "loud", version = "1.0.0", description = "Test fixture: a talkative job." }
            for i = 1, 5000 do print(string.rep("x", 100) .. i) end
            """)
        let config = try cli.file("hubscript.config.lua", """
            return { profiles = { dev = { sandbox = true } }, jobs = { loud = { recipe = "loud.lua", schedule = "* * * * *" } } }
            """)
        let journal = cli.stateDir.appendingPathComponent("journal/journal.sqlite").path
        // A journal not closed cleanly before (its marker gone, as after a kill -9): the
        // scheduler checks it at start, so that it may vouch for it when it stops.
        try cli.run(["runs", "list"], expect: 0)
        try cli.run(["loud.lua"], expect: 0)
        unlink(journal + "-closed")
        XCTAssertFalse(Self.closedCleanly(journal))

        let serve = try ListenCLITests.Child(cli, ["jobs", "serve", "--now", "2026-01-01T10:00:59Z", "--config", config])
        _ = try serve.wait(for: "loud@2026-01-01T10:01:00Z succeeded in ", timeout: 60)
        serve.stop(SIGTERM)
        XCTAssertEqual(serve.process.terminationStatus, 0, serve.output)
        XCTAssertTrue(serve.output.hasSuffix("jobs serve: stopping; running fires finish first\njobs serve: stopped\n"), serve.output)
        XCTAssertTrue(Self.closedCleanly(journal), "the next command opens it without the integrity check")
        XCTAssertLessThanOrEqual(Self.size(journal + "-wal"), 256 * 1024, "the long log was checkpointed into the file")
        // And the fire's output is there for the next command.
        let shown = try cli.run(["runs", "show", "loud@2026-01-01T10:01:00Z", "--output", "--tail", "1"], expect: 0)
        XCTAssertTrue(shown.stdout.contains("succeeded (exit 0): run loud@2026-01-01T10:01:00Z — 0 reads, 0 writes in "),
                      shown.stdout)
    }
}

extension ListenCLITests {
    func testATriggerRunKeepsItsOutputAndListenClosesTheJournalCleanly() throws {
        let s = try prepare()
        defer { s.sandbox.stop() }
        // A journal not closed cleanly before (its marker gone, as after a kill -9): the
        // listener checks it at start, so that it may vouch for it when it stops.
        let journal = s.cli.stateDir.appendingPathComponent("journal/journal.sqlite").path
        try s.cli.run(["runs", "list"], expect: 0)
        unlink(journal + "-closed")
        let (listener, listenURL) = try startListener(s)
        _ = try subscribe(s, listenURL)
        let run = try s.cli.run(["suspend-some.lua", "--profile", "lab", "--config", s.config, "--param", "count=1"])
        XCTAssertEqual(run.status, 0, run.output)
        let user = try XCTUnwrap(run.stdout.split(separator: "\n").map(String.init).first { $0.hasPrefix("usr_") }, run.output)
        XCTAssertTrue(try waitUntil { try notified(s)[user] == 3 }, listener.output)
        XCTAssertTrue(waitUntil(30) { listener.output.contains(" succeeded in ") }, listener.output)
        listener.stop()
        XCTAssertEqual(listener.process.terminationStatus, 0, listener.output)
        XCTAssertTrue(CleanCloseCLITests.closedCleanly(journal), "listen left the journal closed cleanly")

        let list = try s.cli.run(["runs", "list", "--json"], expect: 0)
        let id = try XCTUnwrap(list.stdout.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["run_id"] as? String
        }.first { $0.hasPrefix("offboard@") }, list.output)
        let shown = try s.cli.run(["runs", "show", id, "--output", "--json"], expect: 0)
        let kinds = shown.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.filter { $0["type"] as? String == "output" }.map { "\($0["kind"] ?? "?"): \($0["text"] ?? "?")" }
        XCTAssertEqual(kinds.first, "print: notified \(user)", shown.stdout)
        XCTAssertTrue(kinds.last?.hasPrefix("summary: succeeded (exit 0): run \(id) — 0 reads, 3 writes in ") == true, shown.stdout)
    }
}
