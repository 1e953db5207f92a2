import Foundation
import XCTest
import TestSupport

/// Several hosts on one PostgreSQL journal (`journal = "postgresql://…"`), end to end:
/// the built binary, two state folders standing for two hosts, one `sandbox serve` Hub,
/// and the test server of `HUBSCRIPT_TEST_POSTGRES` (each test in a schema of its own).
final class SharedJournalCLITests: XCTestCase {
    var cli: CLIHarness!
    var server: ServedSandbox?
    var reader: SandboxReader!
    /// Host A is the harness's state folder; host B has its own.
    var hostB: URL { cli.root.appendingPathComponent("host-b") }
    var journalURL: String!

    override func setUpWithError() throws {
        journalURL = try TestPostgres.freshSchemaURL(TestPostgres.requiredBaseURL())
        cli = try CLIHarness(testCase: self)
        try cli.file("recipes/notify.lua", JobsCLITests.notify)
    }

    override func tearDown() { server?.stop() }

    /// Starts the served Hub with `faults` and writes the shared configuration (its
    /// profile, the jobs, the PostgreSQL journal), which every command then reads
    /// (`HUBSCRIPT_CONFIG`), on either host.
    @discardableResult
    func startHub(faults: String = "none", journal: String? = nil) throws -> String {
        let hubState = cli.root.appendingPathComponent("hub-state")
        try cli.resetSandbox(state: hubState)
        let served = try ServedSandbox(cli, state: hubState, faults: faults)
        server = served
        reader = try SandboxReader(served: served.url)
        let config = try cli.file("shared.config.lua", """
            return {
              default_profile = "served",
              profiles = { served = { hub_url = "\(served.url)", api_key = "satk_test_jobs_sandbox_0000000000000000",
                                      api_key_id = "key_jobs", rate_limit_per_minute = 0 } },
              jobs = {
                a = { recipe = "recipes/notify.lua", schedule = "* * * * *" },
                b = { recipe = "recipes/notify.lua", schedule = "*/2 * * * *" },
              },
              journal = "\(journal ?? journalURL!)",
            }
            """)
        cli.extraEnvironment["HUBSCRIPT_CONFIG"] = config
        return config
    }

    /// `runs show ID --json` on `host`.
    func show(_ id: String, on host: URL) throws -> [String: Any] {
        let r = try cli.run(["runs", "show", id, "--json"], state: host, expect: 0)
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], r.output)
    }

    /// `notification.sent` events of app_hub: one per notification the Hub made.
    func notified() throws -> [String] {
        try reader.all("/audit-events", "action=notification.sent&application_id=app_hub").compactMap { $0.string("target_user_id") }
    }

    func testTwoRunDueOnTwoHostsSharingTheJournalFireEachDueJobOnce() throws {
        try startHub()
        let before = try notified().count
        for minute in 0..<4 {
            let now = "2026-01-01T10:0\(minute):05Z"
            let processes = [cli.stateDir, hostB].map { cli.process(["jobs", "run-due", "--now", now], state: $0) }
            XCTAssertEqual(try cli.runTogether(processes), [0, 0])
        }
        // a at 10:00, 10:01, 10:02, 10:03; b at 10:00 and 10:02: six notifications at the Hub.
        XCTAssertEqual(try notified().count - before, 6)
        let r = try cli.run(["jobs", "history", "--json", "--limit", "1000"], state: hostB, expect: 0)
        let rows = r.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let ran = rows.filter { $0["status"] as? String == "succeeded" }.compactMap { $0["run_id"] as? String }
        XCTAssertEqual(ran.sorted(), ["a@2026-01-01T10:00:00Z", "a@2026-01-01T10:01:00Z", "a@2026-01-01T10:02:00Z",
                                      "a@2026-01-01T10:03:00Z", "b@2026-01-01T10:00:00Z", "b@2026-01-01T10:02:00Z"])
        for row in rows where row["status"] as? String != "succeeded" {
            XCTAssertEqual(row["status"] as? String, "skipped", "\(row)")
            XCTAssertTrue((row["reason"] as? String ?? "").hasPrefix("already fired ("), "\(row)")
        }
        for id in ran {
            XCTAssertEqual(try cli.json(["runs", "show", id, "--json"])["attempts"] as? Int, 1, id)
        }
        // Neither host made a SQLite journal: both used the shared one.
        for host in [cli.stateDir, hostB] {
            XCTAssertFalse(FileManager.default.fileExists(atPath: host.appendingPathComponent("journal/journal.sqlite").path))
        }
    }

    /// `kill -9` on host A while a write is pending; resumed from host B (killed there
    /// too, then on A again), finished on B: the Hub made each notification once.
    func testARunKilledOnOneHostIsResumedFromAnotherWithEachWriteOnce() throws {
        try startHub(faults: "latency=150ms")
        let count = ResumeAfterKillOnPendingTests.count
        let before = try notified()
        let users = Array(try reader.all("/users", "status=active").compactMap { $0.string("id") }.prefix(count))
        let recipe = try cli.file("notify-many.lua", ResumeAfterKillOnPendingTests.recipe)
        let id = "run_two_hosts"
        func trial(_ args: [String], at threshold: Int, on host: URL) throws -> KillTrial {
            let states = try cli.killOnPending(args, runID: id, atDone: threshold, state: host)
            return KillTrial(states: states, received: try notified().count - before.count, server: "the Hub")
        }
        var trials = [try trial([recipe, "--run-id", id], at: 4, on: cli.stateDir)]
        XCTAssertEqual(try show(id, on: hostB)["status"] as? String, "interrupted",
                       "host B sees host A's dead run as interrupted")
        trials.append(try trial(["runs", "resume", id], at: 10, on: hostB))
        trials.append(try trial(["runs", "resume", id], at: 16, on: cli.stateDir))
        KillTrial.assertMeaningful(trials)

        let final = try cli.run(["runs", "resume", id], state: hostB, expect: 0)
        XCTAssertTrue(final.stdout.contains("notified \(count) users"), final.output)
        XCTAssertEqual(try cli.writeStates(id), ["done": count])
        let sent = try notified()
        XCTAssertEqual(sent.count - before.count, count, "notifications the Hub made (trials: \(trials))")
        var perUser: [String: Int] = [:]
        for user in sent { perUser[user, default: 0] += 1 }
        for user in before { perUser[user, default: 0] -= 1 }
        XCTAssertEqual(perUser.filter { $0.value != 0 }, Dictionary(uniqueKeysWithValues: users.map { ($0, 1) }))
    }

    func testARunHeldOnOneHostIsRefusedOnAnother() throws {
        try startHub()
        let slow = JobsCLITests.notify.replacingOccurrences(of: "for u in", with: """
            local t0 = os.clock()
            while os.clock() - t0 < 4 do end
            for u in
            """)
        let recipe = try cli.file("slow.lua", slow)
        let (first, stop) = try cli.startDrained([recipe, "--run-id", "run_held"])
        defer { stop() }
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, !(try cli.run(["runs", "show", "run_held", "--json"], state: hostB).stdout
                                     .contains(#""status":"running""#)) {
            usleep(50_000)
        }
        let host = ProcessInfo.processInfo.hostName.prefix(30)
        let message = "error: run run_held is already running in process \(first.processIdentifier) on \(host); wait for it "
            + "to end (hubscript runs list shows it), or stop that process and then resume with hubscript runs resume run_held\n"
        let second = try cli.run([recipe, "--run-id", "run_held"], state: hostB, expect: 2)
        XCTAssertTrue(second.stderr.hasSuffix(message), second.stderr)
        let resume = try cli.run(["runs", "resume", "run_held"], state: hostB, expect: 2)
        XCTAssertTrue(resume.stderr.hasSuffix(message), resume.stderr)
        first.waitUntilExit()
        XCTAssertEqual(first.terminationStatus, 0)
        XCTAssertEqual(try show("run_held", on: hostB)["status"] as? String, "succeeded")
    }

    /// A wrong password, a URL of another database, a server that is not there: exit 2,
    /// what to do, and never the password.
    func testBadJournalURLsStopWithExitCode2AndNeverShowThePassword() throws {
        let socket = try TestPostgres.socketFolder()
        let empty = cli.root.appendingPathComponent("no-server").path
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let cases: [(String, String)] = [
            ("postgresql://hubscript_pw:not-the-password@/hubscript?host=\(socket)",
             "the PostgreSQL journal is out of reach: cannot connect to postgresql://hubscript_pw:***@/hubscript?host=\(socket): "
                + "connection to server on socket \"\(socket)/.s.PGSQL.5432\" failed: FATAL:  password authentication failed for user \"hubscript_pw\""),
            ("postgres://ops:not-the-password@/hubscript?host=\(empty)",
             "the PostgreSQL journal is out of reach: cannot connect to postgres://ops:***@/hubscript?host=\(empty): "
                + "connection to server on socket \"\(empty)/.s.PGSQL.5432\" failed: No such file or directory"),
            ("mysql://ops:not-the-password@db/hubscript",
             "journal must be a PostgreSQL URL such as \"postgresql://user@host/database\" (leave it out to keep the SQLite "
                + "journal in the state directory); mysql://ops:***@db/hubscript is not a PostgreSQL URL: it must start with "
                + "postgresql:// or postgres://"),
        ]
        let recipe = try cli.file("recipes/notify.lua", JobsCLITests.notify)
        for (url, expected) in cases {
            let config = try cli.file("bad.config.lua", #"return { profiles = { dev = { sandbox = true } }, journal = "\#(url)" }"#)
            for args in [["runs", "list"], ["jobs", "history"], [recipe, "--profile", "dev"]] {
                let r = try cli.run(args + ["--config", config], expect: 2)
                XCTAssertTrue(r.stderr.contains(expected), "\(args): \(r.stderr)")
                XCTAssertFalse(r.output.contains("not-the-password"), r.output)
                XCTAssertEqual(r.stdout, "", "\(args)")
            }
        }
        let notURL = try cli.file("bad2.config.lua", #"return { journal = 5432 }"#)
        let r = try cli.run(["runs", "list", "--config", notURL], expect: 2)
        XCTAssertEqual(r.stderr, "hubscript runs list: config \(notURL): journal must be a PostgreSQL URL such as "
                       + "\"postgresql://user@host/database\" (leave it out to keep the SQLite journal in the state directory)\n")
    }

    /// The server stops while a run writes: the run stops with what to do (exit 2);
    /// after a restart, `runs resume` finishes it and the Hub made each write once.
    func testTheServerStoppedMidRunLosesNothingAfterARestartAndResume() throws {
        let own = try TestPostgres.OwnServer()
        try startHub(journal: own.url)
        let count = 20
        let recipe = try cli.file("paced.lua", """
            recipe { name = "paced", version = "1.0.0", description = "Test fixture: paced notifications.",
                     needs = { "users.list", "notifications.send" }, limits = { writes = 100 } }
            local n = 0
            for u in hub.users.list { status = "active" } do
              if n >= \(count) then break end
              local t = os.clock()
              while os.clock() - t < 0.1 do end
              hub.notifications.send("app_hub", { user_id = u.id, title = "T", body = "B", category = "test.pgdown" })
              n = n + 1
            end
            print(("notified %d users"):format(n))
            """)
        let before = try notified()
        let (p, out, err) = cli.process([recipe, "--run-id", "run_pg_down"])
        let stderr = LockedText()
        out.fileHandleForReading.readabilityHandler = { _ = $0.availableData }
        err.fileHandleForReading.readabilityHandler = { stderr.append($0.availableData) }
        try p.run()
        let deadline = Date().addingTimeInterval(30)
        while try p.isRunning && Date() < deadline && (cli.writeStates("run_pg_down")["done"] ?? 0) < 5 { usleep(20_000) }
        try own.stop()
        p.waitUntilExit()
        out.fileHandleForReading.readabilityHandler = nil
        err.fileHandleForReading.readabilityHandler = nil
        XCTAssertEqual(p.terminationStatus, 2, stderr.text)
        XCTAssertTrue(stderr.text.contains("error: the PostgreSQL journal is out of reach: "), stderr.text)
        XCTAssertTrue(stderr.text.contains(" — check that the server is running"), stderr.text)
        XCTAssertLessThan(try notified().count - before.count, count, "the run stopped part-way")

        try own.start()
        XCTAssertEqual(try show("run_pg_down", on: hostB)["status"] as? String, "interrupted")
        let resumed = try cli.run(["runs", "resume", "run_pg_down"], expect: 0)
        XCTAssertTrue(resumed.stdout.contains("notified \(count) users"), resumed.output)
        XCTAssertEqual(try cli.writeStates("run_pg_down"), ["done": count])
        XCTAssertEqual(try notified().count - before.count, count, "each write once at the Hub")
    }
}
