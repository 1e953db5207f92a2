import Foundation
import XCTest

/// `hubscript jobs …` end to end: the built binary, the built-in sandbox Hub, `--now`.
final class JobsCLITests: XCTestCase {
    /// One Hub write per fire: a notification to the first active user.
    static let notify = """
        recipe {
          name = "notify-one", version = "1.0.0", description = "Test fixture: one notification per fire.",
          needs = { "users.list", "notifications.send" },
        }
        for u in hub.users.list { status = "active" } do
          hub.notifications.send("app_hub", { user_id = u.id, title = "Tick", body = "A scheduled fire.", category = "test.jobs" })
          break
        end
        """

    /// The same after about a second of work (CPU time: Lua has no sleep).
    static let slow = notify.replacingOccurrences(of: "for u in", with: """
        local t0 = os.clock()
        while os.clock() - t0 < 1 do end
        for u in
        """)

    var cli: CLIHarness!
    var config: String!

    override func setUpWithError() throws {
        cli = try CLIHarness(testCase: self)
        try cli.file("recipes/notify.lua", Self.notify)
        try cli.file("recipes/slow.lua", Self.slow)
        try cli.resetSandbox()
    }

    /// Writes the config with `jobs` (the inside of `jobs = { … }`).
    func jobs(_ jobs: String) throws {
        config = try cli.file("hubscript.config.lua", "return { profiles = { dev = { sandbox = true } }, jobs = { \(jobs) } }")
    }

    func hubscript(_ args: String...) throws -> CLIHarness.Result { try cli.run(args + ["--config", config]) }

    /// Durations vary: `in 0.27 s` reads `in … s`.
    func stable(_ text: String) -> String {
        text.replacingOccurrences(of: #"in \d+\.\d\d s"#, with: "in … s", options: .regularExpression)
    }

    /// A fire by hand's run id with its milliseconds and random suffix as `…`.
    func manual(_ text: String) -> String {
        text.replacingOccurrences(of: #"@manual-(\S+T\d\d:\d\d:\d\d)\.\d{3}Z-[0-9a-f]{6}"#, with: "@manual-$1.…Z-…",
                                  options: .regularExpression)
    }

    /// Lines sorted (jobs fire at once, so their lines come in any order).
    func lines(_ text: String) -> [String] { stable(text).split(separator: "\n").map(String.init).sorted() }

    func notifications() throws -> Int {
        try cli.sandbox().all("/audit-events", "action=notification.sent&application_id=app_hub").count
    }

    /// `jobs history --json`, oldest first.
    func history() throws -> [[String: Any]] {
        let r = try cli.run(["jobs", "history", "--json", "--limit", "1000", "--config", config])
        XCTAssertEqual(r.status, 0, r.output)
        return r.stdout.split(separator: "\n").reversed().compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    func testConfigMistakesNameTheJobAndTheKey() throws {
        try cli.file("c1.lua", #"return { jobs = { nightly = { recipe = "recipes/notify.lua", schedule = "0 25 * * *" } } }"#)
        try cli.file("c2.lua", #"return { jobs = { nightly = { recipe = "notify.lua", schedule = "@daily" } } }"#)
        try cli.file("c3.lua", #"return { jobs = { nightly = { recipe = "recipes/notify.lua", schedule = "@daily", catch_up = "all" } } }"#)
        let root = cli.root.path
        let expected = [
            "c1.lua": #"job "nightly": schedule: cron "0 25 * * *": hour 25 is out of range 0-23"#,
            "c2.lua": #"job "nightly": recipe "notify.lua" is not a file (looked for \#(root)/notify.lua; a recipe path is relative to the config file's folder)"#,
            "c3.lua": #"job "nightly": catch_up must be "none", "latest" or { all = N }, got "all""#,
        ]
        for (file, message) in expected.sorted(by: { $0.key < $1.key }) {
            for command in ["list", "run-due"] {
                let r = try cli.run(["jobs", command, "--config", "\(root)/\(file)"])
                XCTAssertEqual(r.status, 2, r.output)
                XCTAssertEqual(r.stderr, "hubscript jobs \(command): config \(root)/\(file): \(message)\n")
                XCTAssertEqual(r.stdout, "")
            }
        }
    }

    func testRunDueAcrossMinutesUnderEachCatchUpPolicy() throws {
        try jobs("""
            none = { recipe = "recipes/notify.lua", schedule = "* * * * *" },
            latest = { recipe = "recipes/notify.lua", schedule = "* * * * *", catch_up = "latest" },
            all = { recipe = "recipes/notify.lua", schedule = "* * * * *", catch_up = { all = 2 } },
            """)
        let before = try notifications()
        var r = try hubscript("jobs", "run-due", "--now", "2026-01-01T10:00:05Z")
        XCTAssertEqual(r.status, 0, r.output)
        XCTAssertEqual(lines(r.stdout), [
            "all@2026-01-01T10:00:00Z succeeded in … s", "latest@2026-01-01T10:00:00Z succeeded in … s",
            "none@2026-01-01T10:00:00Z succeeded in … s",
        ])
        XCTAssertEqual(r.stderr, "")
        // Looked at again within the minute: nothing is due twice.
        r = try hubscript("jobs", "run-due", "--now", "2026-01-01T10:00:50Z")
        XCTAssertEqual(r.status, 0, r.output)
        XCTAssertEqual(r.stdout, "")
        r = try hubscript("jobs", "run-due", "--now", "2026-01-01T10:01:05Z")
        XCTAssertEqual(lines(r.stdout), [
            "all@2026-01-01T10:01:00Z succeeded in … s", "latest@2026-01-01T10:01:00Z succeeded in … s",
            "none@2026-01-01T10:01:00Z succeeded in … s",
        ])
        // Nothing ran from 10:02 to 10:05:30.
        r = try hubscript("jobs", "run-due", "--now", "2026-01-01T10:05:30Z")
        XCTAssertEqual(r.status, 0, r.output)
        XCTAssertEqual(lines(r.stdout), [
            "all@2026-01-01T10:02:00Z missed: 1 fire through 2026-01-01T10:02:00Z, late by 60 s or more (catch_up { all = 2 })",
            "all@2026-01-01T10:03:00Z succeeded in … s", "all@2026-01-01T10:04:00Z succeeded in … s",
            "all@2026-01-01T10:05:00Z succeeded in … s",
            "latest@2026-01-01T10:02:00Z missed: 3 fires through 2026-01-01T10:04:00Z, late by 60 s or more (catch_up latest)",
            "latest@2026-01-01T10:05:00Z succeeded in … s",
            "none@2026-01-01T10:02:00Z missed: 3 fires through 2026-01-01T10:04:00Z, late by 60 s or more (catch_up none)",
            "none@2026-01-01T10:05:00Z succeeded in … s",
        ])
        XCTAssertEqual(try notifications() - before, 11, "one notification per fire that ran")

        r = try hubscript("jobs", "list", "--now", "2026-01-01T10:05:40Z")
        XCTAssertEqual(r.stdout, """
            JOB     SCHEDULE   ZONE  NEXT FIRE             LAST FIRE             OUTCOME
            all     * * * * *  UTC   2026-01-01T10:06:00Z  2026-01-01T10:05:00Z  succeeded
            latest  * * * * *  UTC   2026-01-01T10:06:00Z  2026-01-01T10:05:00Z  succeeded
            none    * * * * *  UTC   2026-01-01T10:06:00Z  2026-01-01T10:05:00Z  succeeded

            """)
        r = try hubscript("jobs", "history", "none")
        let rows = stable(r.stdout).split(separator: "\n").map(String.init)
        XCTAssertEqual(rows.first, "RUN ID                     STATUS     STARTED               DURATION  EXIT  REASON")
        XCTAssertEqual(rows.dropFirst().map { $0.replacingOccurrences(of: #"  2026-01-01T10:0\d:\d\dZ  \d+\.\d\d s    "#, with: "  STARTED  DURATION  ", options: .regularExpression) }, [
            "none@2026-01-01T10:05:00Z  succeeded  STARTED  DURATION  0",
            "none@2026-01-01T10:02:00Z  missed     —                     —         —     3 fires through 2026-01-01T10:04:00Z, late by 60 s or more (catch_up none)",
            "none@2026-01-01T10:01:00Z  succeeded  STARTED  DURATION  0",
            "none@2026-01-01T10:00:00Z  succeeded  STARTED  DURATION  0",
        ])
    }

    func testDaylightSavingTimeInAZonedSchedule() throws {
        try jobs(#"night = { recipe = "recipes/notify.lua", schedule = "30 2 * * *", timezone = "Europe/Berlin" }"#)
        var r = try hubscript("jobs", "list", "--now", "2026-03-28T12:00:00Z")
        XCTAssertEqual(r.stdout, """
            JOB    SCHEDULE    ZONE           NEXT FIRE                  LAST FIRE  OUTCOME
            night  30 2 * * *  Europe/Berlin  2026-03-29T03:00:00+02:00  —          —

            """, "02:30 does not exist on 2026-03-29 in Berlin: it fires at 03:00 CEST")
        let times = ["2026-03-29T01:00:10Z", "2026-10-24T00:30:10Z", "2026-10-25T00:30:10Z", "2026-10-25T01:30:10Z"]
        var out: [String] = []
        for time in times {
            r = try hubscript("jobs", "run-due", "--now", time)
            XCTAssertEqual(r.status, 0, r.output)
            out.append(stable(r.stdout))
        }
        XCTAssertEqual(out, [
            "night@2026-03-29T01:00:00Z succeeded in … s\n",
            "night@2026-03-30T00:30:00Z missed: 208 fires through 2026-10-23T00:30:00Z, late by 60 s or more (catch_up none)\nnight@2026-10-24T00:30:00Z succeeded in … s\n",
            "night@2026-10-25T00:30:00Z succeeded in … s\n",
            "",   // 02:30 CET, the repeated hour: not again
        ])
        r = try hubscript("jobs", "list", "--now", "2026-10-25T01:30:10Z")
        XCTAssertEqual(r.stdout, """
            JOB    SCHEDULE    ZONE           NEXT FIRE                  LAST FIRE                  OUTCOME
            night  30 2 * * *  Europe/Berlin  2026-10-26T02:30:00+01:00  2026-10-25T02:30:00+02:00  succeeded

            """)
    }

    func testTwoRunDueAtOnceFireEachDueJobOnce() throws {
        try jobs("""
            a = { recipe = "recipes/notify.lua", schedule = "* * * * *" },
            b = { recipe = "recipes/notify.lua", schedule = "*/2 * * * *" },
            """)
        let before = try notifications()
        for minute in 0..<4 {
            let now = "2026-01-01T10:0\(minute):05Z"
            let processes = (0..<2).map { _ in cli.process(["jobs", "run-due", "--now", now, "--config", config]) }
            XCTAssertEqual(try cli.runTogether(processes), [0, 0])
        }
        // a at 10:00, 10:01, 10:02, 10:03; b at 10:00 and 10:02.
        XCTAssertEqual(try notifications() - before, 6)
        let rows = try history()
        let ran = rows.filter { $0["status"] as? String == "succeeded" }.compactMap { $0["run_id"] as? String }
        XCTAssertEqual(ran.sorted(), ["a@2026-01-01T10:00:00Z", "a@2026-01-01T10:01:00Z", "a@2026-01-01T10:02:00Z",
                                      "a@2026-01-01T10:03:00Z", "b@2026-01-01T10:00:00Z", "b@2026-01-01T10:02:00Z"])
        for row in rows where row["status"] as? String != "succeeded" {
            XCTAssertEqual(row["status"] as? String, "skipped")
            XCTAssertTrue((row["reason"] as? String ?? "").hasPrefix("already fired ("), "\(row)")
        }
        // Each run started once: no second pass of any fire's run.
        for id in ran {
            let show = try cli.run(["runs", "show", id, "--json"])
            let run = try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [String: Any]
            XCTAssertEqual(run?["attempts"] as? Int, 1, id)
        }
    }

    /// Starts `jobs run-due --now now` and waits until `runID` is recorded fired.
    func startFire(_ now: String, _ runID: String) throws -> (Process, () -> Void) {
        let (p, stop) = try cli.startDrained(["jobs", "run-due", "--now", now, "--config", config])
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, !(try history().contains { $0["run_id"] as? String == runID && $0["status"] as? String == "fired" }) {
            usleep(20_000)
        }
        return (p, stop)
    }

    func testOverlapSkipAndQueue() throws {
        try jobs("""
            s = { recipe = "recipes/slow.lua", schedule = "* * * * *" },
            q = { recipe = "recipes/slow.lua", schedule = "* * * * *", overlap = "queue" },
            """)
        let before = try notifications()
        let (first, stop) = try startFire("2026-01-01T10:00:05Z", "s@2026-01-01T10:00:00Z")
        defer { stop() }
        let r = try hubscript("jobs", "run-due", "--now", "2026-01-01T10:01:05Z")
        first.waitUntilExit()
        XCTAssertEqual(first.terminationStatus, 0)
        XCTAssertEqual(r.status, 0, r.output)
        XCTAssertEqual(lines(r.stdout), [
            "q@2026-01-01T10:01:00Z succeeded in … s (queued behind q@2026-01-01T10:00:00Z (overlap queue))",
            "s@2026-01-01T10:01:00Z skipped: overlap: s@2026-01-01T10:00:00Z is still running (overlap skip)",
        ])
        let rows = try history()
        func row(_ id: String) -> [String: Any]? { rows.first { $0["run_id"] as? String == id && $0["status"] as? String == "succeeded" } }
        let q0 = try XCTUnwrap(row("q@2026-01-01T10:00:00Z")), q1 = try XCTUnwrap(row("q@2026-01-01T10:01:00Z"))
        XCTAssertLessThanOrEqual(q0["finished_at"] as? String ?? "~", q1["started_at"] as? String ?? "",
                                 "the queued fire started before the one it queued behind ended")
        XCTAssertEqual(try notifications() - before, 3, "s at 10:00, q at 10:00 and 10:01")
    }

    func testServeFiresEachMinuteAndStopsOnSIGTERMAfterTheRunningFire() throws {
        try jobs(#"tick = { recipe = "recipes/slow.lua", schedule = "* * * * *" }"#)
        let before = try notifications()
        let (p, out, err) = cli.process(["jobs", "serve", "--now", "2026-01-01T10:00:59Z", "--config", config])
        let stdout = LockedData(), stderr = LockedData()
        let outReader = Thread { stdout.set(out.fileHandleForReading.readDataToEndOfFile()) }
        let errReader = Thread { stderr.set(err.fileHandleForReading.readDataToEndOfFile()) }
        try p.run()
        outReader.start()
        errReader.start()
        // 10:00 is on time at once; 10:01 comes a second later, while 10:00 still runs.
        let deadline = Date().addingTimeInterval(30)
        var running: String?
        while Date() < deadline && running == nil {
            running = try history().first { $0["status"] as? String == "fired" }?["run_id"] as? String
            if running == nil { usleep(20_000) }
        }
        let id = try XCTUnwrap(running)
        kill(p.processIdentifier, SIGTERM)
        p.waitUntilExit()
        while !stdout.isSet || !stderr.isSet { usleep(1_000) }
        XCTAssertEqual(p.terminationStatus, 0)
        let text = String(decoding: stderr.value, as: UTF8.self)
        XCTAssertTrue(text.hasPrefix("jobs serve: 1 job (tick); next: tick@2026-01-01T10:01:00Z\n"), text)
        XCTAssertTrue(text.hasSuffix("jobs serve: stopping; running fires finish first\njobs serve: stopped\n"), text)
        let rows = try history()
        XCTAssertEqual(rows.first { $0["run_id"] as? String == id && $0["status"] as? String != "skipped" }?["status"] as? String,
                       "succeeded", "the fire running at SIGTERM finished: \(rows)")
        XCTAssertEqual(rows.filter { ["queued", "fired"].contains($0["status"] as? String) }.count, 0, "\(rows)")
        let succeeded = rows.filter { $0["status"] as? String == "succeeded" }.count
        XCTAssertGreaterThanOrEqual(succeeded, 1)
        XCTAssertEqual(try notifications() - before, succeeded)
        XCTAssertTrue(stable(String(decoding: stdout.value, as: UTF8.self)).contains("\(id) succeeded in … s\n"))
    }

    func testAFireKilledMidRecipeIsResumedByTheNextRunDueNotRepeated() throws {
        try cli.file("recipes/many.lua", """
            recipe {
              name = "notify-many", version = "1.0.0", description = "Test fixture: six notifications, slowly.",
              needs = { "users.list", "notifications.send" },
            }
            local n = 0
            for u in hub.users.list { status = "active" } do
              if n == 6 then break end
              local t0 = os.clock()
              while os.clock() - t0 < 0.15 do end
              hub.notifications.send("app_hub", { user_id = u.id, title = "Tick", body = "One of six.", category = "test.jobs" })
              n = n + 1
            end
            """)
        try jobs(#"many = { recipe = "recipes/many.lua", schedule = "0 * * * *" }"#)
        let before = try notifications()
        let id = "many@2026-01-01T10:00:00Z"
        let (p, stop) = try cli.startDrained(["jobs", "run-due", "--now", "2026-01-01T10:00:05Z", "--config", config])
        defer { stop() }
        let deadline = Date().addingTimeInterval(30)
        while try p.isRunning && Date() < deadline && cli.writeStates(id)["done", default: 0] < 2 { usleep(5_000) }
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationReason, .uncaughtSignal, "run-due ended before the kill")
        let sentBefore = try notifications() - before
        XCTAssertLessThan(sentBefore, 6, "the kill came after every write")
        var r = try hubscript("jobs", "list", "--now", "2026-01-01T10:00:30Z")
        XCTAssertTrue(r.stdout.hasSuffix("2026-01-01T10:00:00Z  interrupted\n"), r.stdout)

        r = try hubscript("jobs", "run-due", "--now", "2026-01-01T10:01:05Z")
        XCTAssertEqual(r.status, 0, r.output)
        XCTAssertEqual(stable(r.stdout), "\(id) succeeded in … s (resumed after an interrupted run)\n")
        XCTAssertEqual(try notifications() - before, 6, "each of the six notifications once (\(sentBefore) before the kill)")
        XCTAssertEqual(try cli.writeStates(id), ["done": 6])
        let rows = try history()
        XCTAssertEqual(rows.count, 1, "\(rows)")
        let show = try JSONSerialization.jsonObject(with: Data(try cli.run(["runs", "show", id, "--json"]).stdout.utf8)) as? [String: Any]
        XCTAssertEqual(show?["attempts"] as? Int, 2)
    }

    func testRunByHandAndHistory() throws {
        try jobs(#"tick = { recipe = "recipes/notify.lua", schedule = "0 * * * *" }"#)
        var r = try hubscript("jobs", "run", "tick", "--now", "2026-01-01T10:20:00Z")
        XCTAssertEqual(r.status, 0, r.output)
        XCTAssertEqual(manual(stable(r.stdout)), "tick@manual-2026-01-01T10:20:00.…Z-… succeeded in … s\n")
        r = try hubscript("jobs", "run", "tock")
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(r.stderr, "hubscript jobs run: no job 'tock' in \(config!) (jobs: tick)\n")
        r = try hubscript("jobs", "history", "--json")
        let row = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(row["type"] as? String, "fire")
        XCTAssertEqual((row["run_id"] as? String).map(manual), "tick@manual-2026-01-01T10:20:00.…Z-…")
        XCTAssertEqual(row["trigger"] as? String, "manual")
        XCTAssertEqual(row["status"] as? String, "succeeded")
        XCTAssertEqual(row["exit_code"] as? Int, 0)
        XCTAssertEqual(row["started_at"] as? String, "2026-01-01T10:20:00Z")
        // A fire by hand is not the scheduled one: 10:00 was never settled, 11:00 fires.
        r = try hubscript("jobs", "run-due", "--now", "2026-01-01T11:00:10Z")
        XCTAssertEqual(stable(r.stdout), "tick@2026-01-01T11:00:00Z succeeded in … s\n")
    }

    func testTwoFiresByHandInTheSameSecondBothRun() throws {
        try jobs(#"tick = { recipe = "recipes/notify.lua", schedule = "0 * * * *" }"#)
        let before = try notifications()
        let first = try hubscript("jobs", "run", "tick", "--now", "2026-01-01T10:20:00Z")
        let second = try hubscript("jobs", "run", "tick", "--now", "2026-01-01T10:20:00Z")
        for r in [first, second] {
            XCTAssertEqual(r.status, 0, r.output)
            XCTAssertEqual(manual(stable(r.stdout)), "tick@manual-2026-01-01T10:20:00.…Z-… succeeded in … s\n")
        }
        XCTAssertNotEqual(first.stdout, second.stdout, "each fire by hand has its own run id")
        XCTAssertEqual(try notifications() - before, 2, "both fires ran")
        let rows = try history()
        XCTAssertEqual(rows.map { $0["status"] as? String }, ["succeeded", "succeeded"])
        XCTAssertEqual(Set(rows.compactMap { $0["run_id"] as? String }).count, 2)
    }

    func testAFailedFireIsSentToTheOnFailureDispatchOnce() throws {
        try cli.file("recipes/fail.lua", """
            recipe { name = "fail", needs = { "users.list" } }
            error({ code = "sync_failed", message = "the sync found 3 conflicts" })
            """)
        try jobs(#"sync = { recipe = "recipes/fail.lua", schedule = "*/5 * * * *", profile = "dev", on_failure = { dispatch = "dev" } }"#)
        var r = try hubscript("jobs", "run-due", "--now", "2026-01-01T10:05:10Z")
        XCTAssertEqual(r.status, 1, r.output)
        let line = try XCTUnwrap(stable(r.stdout).split(separator: "\n").first.map(String.init))
        XCTAssertTrue(line.hasPrefix("sync@2026-01-01T10:05:00Z failed (exit 1) in … s: "), line)
        XCTAssertTrue(line.contains(#"sync_failed: the sync found 3 conflicts; on_failure: dispatch "dev" notified ("#), line)
        // The same fire again (a second scheduler, a replay): nothing runs, nothing is sent twice.
        r = try hubscript("jobs", "run-due", "--now", "2026-01-01T10:05:20Z")
        XCTAssertEqual(r.stdout, "", r.output)
        let log = try cli.run(["sandbox", "dispatch-log", "--json"], expect: 0)
        let sent = log.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        XCTAssertEqual(sent.count, 1, log.stdout)
        XCTAssertEqual(sent.first?["title"] as? String, "hubscript: job sync failed")
        XCTAssertEqual(sent.first?["key"] as? String, "job-failure-sync@2026-01-01T10:05:00Z")
        XCTAssertTrue((sent.first?["body"] as? String)?.hasPrefix("sync@2026-01-01T10:05:00Z exited 1: ") == true, log.stdout)
    }

    func testJobsHelp() throws {
        let r = try cli.run(["jobs", "--help"])
        XCTAssertEqual(r.stdout, """
            OVERVIEW: List, fire and serve the scheduled jobs of the configuration.

            USAGE: hubscript jobs <subcommand> [options]

            SUBCOMMANDS:
              list     List the jobs: schedule, time zone, next fire, last fire and its outcome.
              run-due  Fire each job that is due now, once per scheduled time (for a crontab line every minute).
              serve    Run the scheduler in the foreground: sleep until a job is due, fire it, repeat.
              run      Fire a job now, by hand (run id JOB@manual-<now, RFC 3339 UTC>-<random>).
              history  Show the recorded fires, skips and misses, newest first.
              check    Check every job and trigger: recipe, params, profile, schedule, zone, allow, Dispatch.

            See 'hubscript jobs <subcommand> --help'.

            """)
    }
}
