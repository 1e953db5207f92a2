import Foundation
import XCTest

/// A run killed with `kill -9`, then its journal's write-ahead log deleted or its header
/// damaged: every command refuses the journal (exit 2) instead of forgetting the run;
/// `runs repair --accept-loss` accepts the loss. A kill without damage, and processes
/// writing the journal at once, raise no alarm.
final class JournalHistoryCLITests: XCTestCase {
    var cli: CLIHarness!
    var recipe: String!
    var journal: String { cli.stateDir.appendingPathComponent("journal/journal.sqlite").path }

    override func setUpWithError() throws {
        cli = try CLIHarness(testCase: self)
        try cli.resetSandbox()
        recipe = try cli.file("grant.lua", RunLifecycleTests.recipe)
    }

    /// Starts a grant of 20 users and kills it with SIGKILL once `done` grants are
    /// journalled. Reading the journal meanwhile (`runs show`) leaves its log in place.
    func killMidRun(_ id: String, done: Int) throws {
        let (p, stop) = try cli.startDrained([recipe!, "--param", "count=20", "--param", "pause_ms=30", "--run-id", id])
        defer { stop() }
        let deadline = Date().addingTimeInterval(30)
        while p.isRunning && Date() < deadline {
            if try cli.writeStates(id)["done"] ?? 0 >= done { break }
            usleep(5_000)
        }
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationReason, .uncaughtSignal, "the run ended before the kill")
    }

    /// The refusal every command gives, with the counts it names.
    func assertRefusedEverywhere(file: StaticString = #filePath, line: UInt = #line) throws {
        let grantsBefore = try grants()
        for args in [["runs", "list"], ["runs", "show", "run_killed"], ["runs", "resume", "run_killed"],
                     ["run", recipe!, "--param", "count=2"], ["runs", "repair"]] {
            let r = try cli.run(args)
            XCTAssertEqual(r.status, 2, "\(args): \(r.output)", file: file, line: line)
            XCTAssertEqual(r.stdout, "", file: file, line: line)
            let counts = try XCTUnwrap(r.stderr.firstMatch(of: #/lost committed history: its history mark was (\d+) after its last commit, the file holds (\d+) /#),
                                       r.stderr, file: file, line: line)
            let recorded = Int(counts.1)!, held = Int(counts.2)!
            XCTAssertGreaterThan(recorded, held, file: file, line: line)
            // The run commands report as a run does ("error: …"), the others name themselves.
            let prefix = ["resume", "run"].contains(args[args[0] == "runs" ? 1 : 0]) ? "error: " : "hubscript runs \(args[1]): "
            XCTAssertEqual(r.stderr.split(separator: "\n").last.map(String.init), prefix + """
                the journal \(journal): it has lost committed history: its history mark was \(recorded) after \
                its last commit, the file holds \(held) (its write-ahead log \(journal)-wal was deleted or damaged after \
                its last commits, or the machine lost power before they reached the disk); runs, writes and fires \
                recorded in them are forgotten. Nothing was run: a run it forgot would be started afresh and not \
                resumed. Keep a copy of its files (cp -p \(journal)* SOMEWHERE/), then either restore them from a \
                backup, or accept the loss with hubscript runs repair --accept-loss (check on the Hub what runs of \
                that time did).
                """, "\(args)", file: file, line: line)
        }
        XCTAssertEqual(try grants(), grantsBefore, "a refused command made a write", file: file, line: line)
    }

    func grants() throws -> Int {
        try cli.sandbox().all("/audit-events", "action=entitlement.granted").count
    }

    func testADeletedLogAfterAKillIsRefusedUntilTheLossIsAccepted() throws {
        try killMidRun("run_killed", done: 3)
        XCTAssertEqual(unlink(journal + "-wal"), 0)
        try assertRefusedEverywhere()

        let repaired = try cli.run(["runs", "repair", "--accept-loss"], expect: 0)
        XCTAssertTrue(repaired.stdout.hasPrefix("the journal \(journal) is in use again as it now is (history mark "), repaired.stdout)
        XCTAssertTrue(repaired.stdout.contains(" was recorded: what came after "), repaired.stdout)
        XCTAssertEqual(try cli.run(["runs", "list"], expect: 0).stdout, "no runs yet\n")
        XCTAssertEqual(try cli.run(["runs", "repair"], expect: 0).stdout,
                       "the journal \(journal) is intact: it holds every commit recorded.\n")
        // Accepting when nothing is lost changes nothing and keeps no copy.
        XCTAssertEqual(try cli.run(["runs", "repair", "--accept-loss"], expect: 0).stdout,
                       "the journal \(journal) is intact: it holds every commit recorded.\n")
        let copies = try FileManager.default.contentsOfDirectory(atPath: (journal as NSString).deletingLastPathComponent)
            .filter { $0.contains(".lost-") }
        XCTAssertEqual(copies, [], "the log was deleted: nothing to copy")
    }

    func testALogWhoseHeaderWasOverwrittenAfterAKillIsRefused() throws {
        try killMidRun("run_killed", done: 3)
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: journal + "-wal"))
        try handle.write(contentsOf: Data(repeating: 0xEE, count: 32))
        try handle.close()
        try assertRefusedEverywhere()
        let repaired = try cli.run(["runs", "repair", "--accept-loss"], expect: 0)
        let copy = try XCTUnwrap(repaired.stdout.firstMatch(of: #/A copy of its write-ahead log as it was: (\S+)\n/#)?.1, repaired.stdout)
        XCTAssertTrue(copy.hasPrefix(journal + "-wal.lost-"), String(copy))
        XCTAssertTrue(FileManager.default.fileExists(atPath: String(copy)))
        try cli.run(["run", try cli.file("notify.lua", JobsCLITests.notify)], expect: 0)
    }

    /// A kill at any point, without damage, is an interrupted run: listed and resumed.
    func testKillsWithoutDamageRaiseNoAlarm() throws {
        for (n, done) in [1, 4, 9].enumerated() {
            try cli.resetSandbox()
            try killMidRun("run_\(n)", done: done)
            let list = try cli.run(["runs", "list"], expect: 0)
            XCTAssertTrue(list.stdout.contains("run_\(n) "), list.stdout)
        }
        XCTAssertEqual(try cli.run(["runs", "repair"], expect: 0).stdout,
                       "the journal \(journal) is intact: it holds every commit recorded.\n")
    }

    /// Runs and schedulers writing one journal at once never look like a loss.
    func testProcessesWritingAtOnceRaiseNoAlarm() throws {
        let notify = try cli.file("recipes/notify.lua", JobsCLITests.notify)
        let config = try cli.file("hubscript.config.lua", """
            return { profiles = { dev = { sandbox = true } }, jobs = {
              a = { recipe = "recipes/notify.lua", schedule = "* * * * *" },
              b = { recipe = "recipes/notify.lua", schedule = "* * * * *" },
            } }
            """)
        for minute in 0..<3 {
            let now = "2026-01-01T10:0\(minute):05Z"
            var processes = (0..<2).map { _ in cli.process(["jobs", "run-due", "--now", now, "--config", config]) }
            processes += (0..<2).map { k in cli.process([notify, "--run-id", "run_\(minute)_\(k)"]) }
            XCTAssertEqual(try cli.runTogether(processes), [0, 0, 0, 0])
            try cli.run(["runs", "list"], expect: 0)
        }
        XCTAssertEqual(try cli.run(["runs", "repair"], expect: 0).stdout,
                       "the journal \(journal) is intact: it holds every commit recorded.\n")
    }
}
