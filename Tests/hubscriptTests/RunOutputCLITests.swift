import Foundation
import XCTest
import TestSupport

/// What a run said, kept with it in the journal and shown by `runs show ID --output`,
/// for every way a run starts; `runs show` pages long lists.
final class RunOutputCLITests: XCTestCase {
    /// Says something of every kind, reads the Hub, then fails at a known line.
    static let talker = """
        recipe {
          name = "talker", version = "1.0.0", description = "Test fixture: says things, then fails.",
          needs = { "users.list" },
        }
        print("hello")
        print("two\\nlines")
        log.info("an info", { user = "ada lovelace", n = 3 })
        log.debug("not kept unless shown")
        local n = 0
        for _ in hub.users.list { status = "active" } do n = n + 1; if n == 2 then break end end
        print("users", n)
        error("boom")
        """

    var cli: CLIHarness!

    override func setUpWithError() throws {
        cli = try CLIHarness(testCase: self)
        try cli.resetSandbox()
        try cli.file("talker.lua", Self.talker)
    }

    /// Times and durations vary: `08:01:46.123` reads `HH:MM:SS.mmm`, a date `YYYY-MM-DD`.
    func stable(_ text: String) -> String {
        text.replacingOccurrences(of: #"\d\d:\d\d:\d\d\.\d\d\d"#, with: "HH:MM:SS.mmm", options: .regularExpression)
            .replacingOccurrences(of: #"\d\d\d\d-\d\d-\d\d"#, with: "YYYY-MM-DD", options: .regularExpression)
            .replacingOccurrences(of: #"in \d+\.\d\d s"#, with: "in … s", options: .regularExpression)
    }

    /// The run id a run's stderr announces.
    func runID(_ r: CLIHarness.Result) throws -> String {
        let regex = try NSRegularExpression(pattern: "(?:run|plan) (run_[0-9A-Za-z_]+) started")
        let m = try XCTUnwrap(regex.firstMatch(in: r.stderr, range: NSRange(r.stderr.startIndex..., in: r.stderr)), r.output)
        return String(r.stderr[Range(m.range(at: 1), in: r.stderr)!])
    }

    /// `runs show ID --output --json`: the line objects, then the page object.
    func keptLines(_ id: String, _ extra: [String] = [], in harness: CLIHarness? = nil) throws
        -> (lines: [[String: Any]], page: [String: Any]) {
        let r = try (harness ?? cli).run(["runs", "show", id, "--output", "--json"] + extra, expect: 0)
        let objects = r.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let page = try XCTUnwrap(objects.last, r.output)
        XCTAssertEqual(page["type"] as? String, "output_page")
        return (Array(objects.dropLast()), page)
    }

    func testARunKeepsItsPrintsLogsErrorAndSummary() throws {
        let r = try cli.run(["talker.lua"], expect: 1)
        let id = try runID(r)
        let shown = try cli.run(["runs", "show", id, "--output"], expect: 0)
        XCTAssertEqual(stable(shown.stdout), """
            attempt 1 (YYYY-MM-DD UTC)
              HH:MM:SS.mmm  hello
              HH:MM:SS.mmm  two
                            lines
              HH:MM:SS.mmm  [info] an info n=3 user="ada lovelace"
              HH:MM:SS.mmm  users\t2
              HH:MM:SS.mmm  error: talker.lua:12: boom
                            stack traceback:
                            \t[C]: in function 'error'
                            \ttalker.lua:12: in main chunk
                            \t[C]: in ?
              HH:MM:SS.mmm  failed (exit 1): run \(id) — 1 reads, 0 writes in … s

            """)
        XCTAssertEqual(shown.stderr, "")
        let (lines, page) = try keptLines(id)
        XCTAssertEqual(lines.map { $0["kind"] as? String }, ["print", "print", "log.info", "print", "error", "summary"])
        XCTAssertEqual(lines.map { $0["seq"] as? Int }, Array(1...6))
        XCTAssertEqual(lines.map { $0["attempt"] as? Int }, Array(repeating: 1, count: 6))
        XCTAssertEqual(lines[1]["text"] as? String, "two\nlines")
        XCTAssertEqual(page["total"] as? Int, 6)
        XCTAssertEqual(page["count"] as? Int, 6)
        // The run's page points at it.
        let show = try cli.run(["runs", "show", id], expect: 0)
        XCTAssertTrue(show.stdout.contains("output    6 lines kept: hubscript runs show \(id) --output\n"), show.stdout)
        XCTAssertEqual((try cli.json(["runs", "show", id, "--json"]))["output_lines"] as? Int, 6)
    }

    /// On a PostgreSQL journal the same lines are kept, and a resume on another host
    /// (here another state folder) appends to them.
    func testAPostgreSQLJournalKeepsTheOutputOfEveryAttempt() throws {
        let url = try TestPostgres.freshSchemaURL()
        let config = try cli.file("hubscript.config.lua", """
            return { profiles = { dev = { sandbox = true } }, journal = "\(url)" }
            """)
        let first = try cli.run(["talker.lua", "--config", config])
        XCTAssertEqual(first.status, 1, first.output)
        let id = try runID(first)
        let elsewhere = cli.root.appendingPathComponent("other-host")
        try cli.run(["sandbox", "reset"], state: elsewhere, expect: 0)
        let resumed = try cli.run(["runs", "resume", id, "--config", config], state: elsewhere)
        XCTAssertEqual(resumed.status, 1, resumed.output)
        let shown = try cli.run(["runs", "show", id, "--output", "--json", "--config", config], expect: 0)
        let lines = shown.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.filter { $0["type"] as? String == "output" }
        XCTAssertEqual(lines.map { "\($0["attempt"] ?? "?") \($0["kind"] ?? "?")" },
                       ["1 print", "1 print", "1 log.info", "1 print", "1 error", "1 summary",
                        "2 print", "2 print", "2 log.info", "2 print", "2 error", "2 summary"], shown.stdout)
        XCTAssertEqual(lines.map { $0["seq"] as? Int }, Array(1...12))
    }

    func testVerboseRunsKeepTheirDebugLines() throws {
        let r = try cli.run(["talker.lua", "--verbose"], expect: 1)
        let (lines, _) = try keptLines(try runID(r))
        XCTAssertTrue(lines.contains { $0["kind"] as? String == "log.debug" && $0["text"] as? String == "not kept unless shown" })
    }

    func testAResumeAppendsItsAttemptUnderItsOwnHeading() throws {
        let id = try runID(try cli.run(["talker.lua"], expect: 1))
        try cli.run(["runs", "resume", id], expect: 1)
        let shown = stable(try cli.run(["runs", "show", id, "--output"], expect: 0).stdout)
        XCTAssertEqual(shown.components(separatedBy: "attempt 1 (YYYY-MM-DD UTC)\n").count - 1, 1, shown)
        XCTAssertEqual(shown.components(separatedBy: "attempt 2 (YYYY-MM-DD UTC)\n").count - 1, 1, shown)
        let (lines, _) = try keptLines(id)
        XCTAssertEqual(lines.map { $0["seq"] as? Int }, Array(1...12), "one sequence across both attempts")
        XCTAssertEqual(lines.map { $0["attempt"] as? Int }, Array(repeating: 1, count: 6) + Array(repeating: 2, count: 6))
        XCTAssertTrue((lines.last?["text"] as? String)?.hasPrefix("failed (exit 1): run \(id) — ") == true, "\(lines.last ?? [:])")
        // A page across the attempts still says which attempt each line is from.
        let tail = stable(try cli.run(["runs", "show", id, "--output", "--tail", "2"], expect: 0).stdout)
        XCTAssertTrue(tail.hasPrefix("attempt 2 (YYYY-MM-DD UTC)\n  HH:MM:SS.mmm  error: talker.lua:12: boom\n"), tail)
        XCTAssertTrue(tail.hasSuffix("output lines 11–12 of 12 shown; see more with hubscript runs show \(id) --output --offset K, --tail N, --limit N\n"), tail)
    }

    func testPlanAndApplyKeepTheirOutputUnderThePlansRun() throws {
        try cli.file("grant.lua", """
            recipe {
              name = "grant", version = "1.0.0", description = "Test fixture: one write.",
              needs = { "users.manage" },
            }
            print("suspending ada")
            hub.users.suspend("usr_ada", { reason = "kept output test" })
            """)
        let plan = try cli.run(["plan", "grant.lua", "--out", "plan.json"], expect: 0)
        let id = try runID(plan)
        try cli.run(["apply", "plan.json"], expect: 0)
        let (lines, _) = try keptLines(id)
        XCTAssertEqual(lines.map { "\($0["attempt"] ?? "?") \($0["kind"] ?? "?")" },
                       ["1 print", "1 summary", "2 print", "2 summary"])
        XCTAssertTrue((lines[1]["text"] as? String)?.hasPrefix("succeeded (exit 0): run \(id) — 0 reads, 0 writes, 1 planned in ") == true)
        XCTAssertTrue((lines[3]["text"] as? String)?.hasPrefix("succeeded (exit 0): run \(id) — 0 reads, 1 writes in ") == true)
    }

    func testAJobFireKeepsItsOutput() throws {
        try cli.file("tick.lua", """
            recipe { name = "tick", version = "1.0.0", description = "Test fixture: a job.", needs = { "users.list" } }
            print("tick from a job")
            """)
        let config = try cli.file("hubscript.config.lua", """
            return { profiles = { dev = { sandbox = true } }, jobs = { tick = { recipe = "tick.lua", schedule = "0 3 * * *" } } }
            """)
        try cli.run(["jobs", "run", "tick", "--config", config], expect: 0)
        let list = try cli.run(["runs", "list", "--json"], expect: 0)
        let run = try XCTUnwrap(list.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.first, list.output)
        let id = try XCTUnwrap(run["run_id"] as? String)
        XCTAssertTrue(id.hasPrefix("tick@"), id)
        let (lines, _) = try keptLines(id)
        XCTAssertEqual(lines.map { $0["text"] as? String }.first, "tick from a job")
        XCTAssertEqual(lines.map { $0["kind"] as? String }, ["print", "summary"])
    }

    /// A secret the run loaded is masked in what is kept, as on the console.
    func testSecretsStayMaskedInTheKeptOutput() throws {
        let vault = try VaultCLI(testCase: self)
        try vault.initialise()
        let cli = vault.harness
        cli.extraEnvironment = ["HUBSCRIPT_VAULT_KEY_FILE": vault.keyFile]
        try cli.resetSandbox()
        let secret = "kept_output_CANARY_5e1d0c9b8a"
        XCTAssertEqual(try vault.run(["set", "app/token", "--key-file", vault.keyFile], stdin: secret).status, 0)
        try cli.file("echo.lua", """
            recipe {
              name = "echo", version = "1.0.0", description = "Test fixture: repeats a param.",
              params = { note = { type = "string" } }, secrets = { "app/token" },
            }
            print("note: " .. params.note)
            log.warn("note " .. params.note)
            error("failing with " .. params.note)
            """)
        let r = try cli.run(["echo.lua", "--param", "note=\(secret)"])
        XCTAssertEqual(r.status, 1, r.output)
        XCTAssertFalse(r.output.contains(secret), r.output)
        let id = try runID(r)
        let kept = try cli.run(["runs", "show", id, "--output", "--json"], expect: 0).stdout
        XCTAssertFalse(kept.contains(secret), kept)
        let (lines, _) = try keptLines(id, in: cli)
        XCTAssertEqual(lines.prefix(3).map { ($0["text"] as? String)?.components(separatedBy: "\n").first },
                       ["note: <secret app/token>", "note <secret app/token>", "error: echo.lua:7: failing with <secret app/token>"])
        let journal = try Data(contentsOf: cli.stateDir.appendingPathComponent("journal/journal.sqlite"))
            + ((try? Data(contentsOf: cli.stateDir.appendingPathComponent("journal/journal.sqlite-wal"))) ?? Data())
        XCTAssertNil(journal.range(of: Data(secret.utf8)), "the journal's files hold no byte of the secret")
    }

    /// A run that prints past the bound keeps its first lines, says how much it left
    /// out, and still keeps how it ended.
    func testARunPrintingPastTheBoundKeepsItsBeginningAndItsEnd() throws {
        try cli.file("loud.lua", """
            recipe { name = "loud", version = "1.0.0", description = "Test fixture: prints a lot." }
            for i = 1, 10005 do print("line " .. i) end
            """)
        let r = try cli.run(["loud.lua"], expect: 0)
        XCTAssertEqual(r.stdout.split(separator: "\n").count, 10005, "the console gets every line")
        let id = try runID(r)
        let tail = stable(try cli.run(["runs", "show", id, "--output", "--tail", "3"], expect: 0).stdout)
        XCTAssertEqual(tail, """
            attempt 1 (YYYY-MM-DD UTC)
              HH:MM:SS.mmm  line 10000
              HH:MM:SS.mmm  output truncated: 5 more lines (50 bytes) not kept; the journal keeps 10000 lines or 1048576 bytes of a run's output
              HH:MM:SS.mmm  succeeded (exit 0): run \(id) — 0 reads, 0 writes in … s
            output lines 10000–10002 of 10002 shown; see more with hubscript runs show \(id) --output --offset K, --tail N, --limit N

            """)
        let page = stable(try cli.run(["runs", "show", id, "--output", "--offset", "5", "--limit", "2"], expect: 0).stdout)
        XCTAssertEqual(page, """
            attempt 1 (YYYY-MM-DD UTC)
              HH:MM:SS.mmm  line 6
              HH:MM:SS.mmm  line 7
            output lines 6–7 of 10002 shown; see more with hubscript runs show \(id) --output --offset 7, --tail N, --limit N

            """)
        let (lines, page2) = try keptLines(id, ["--offset", "9999", "--limit", "10"])
        XCTAssertEqual(lines.map { $0["kind"] as? String }, ["print", "truncated", "summary"])
        XCTAssertEqual(page2["offset"] as? Int, 9999)
        XCTAssertEqual(page2["total"] as? Int, 10002)
    }

    /// `runs show` reads a page of the writes, not all of them, and says how to see more.
    func testRunsShowPagesTheWrites() throws {
        try cli.file("five.lua", """
            recipe {
              name = "five", version = "1.0.0", description = "Test fixture: five writes.",
              needs = { "users.list", "notifications.send" },
            }
            for i = 1, 5 do
              hub.notifications.send("app_hub", { user_id = "usr_ada", title = "n" .. i, body = "b", category = "test" })
            end
            """)
        let id = try runID(try cli.run(["five.lua"], expect: 0))
        let all = try cli.run(["runs", "show", id], expect: 0).stdout
        XCTAssertFalse(all.contains(" shown; see more"), "five writes fit the default page: \(all)")
        XCTAssertEqual(all.components(separatedBy: " done ").count - 1, 5, all)

        let first = try cli.run(["runs", "show", id, "--limit", "2"], expect: 0).stdout
        XCTAssertEqual(first.components(separatedBy: " done ").count - 1, 2, first)
        XCTAssertTrue(first.contains("\n  1 done "), first)
        XCTAssertTrue(first.hasSuffix("writes 1–2 of 5 shown; see more with hubscript runs show \(id) --offset 2, --tail N, --limit N\n"), first)

        let tail = try cli.run(["runs", "show", id, "--tail", "2"], expect: 0).stdout
        XCTAssertTrue(tail.contains("\n  4 done ") && tail.contains("\n  5 done "), tail)
        XCTAssertTrue(tail.hasSuffix("writes 4–5 of 5 shown; see more with hubscript runs show \(id) --offset K, --tail N, --limit N\n"), tail)

        let json = try cli.json(["runs", "show", id, "--json", "--offset", "3", "--limit", "1"])
        XCTAssertEqual(json["writes_total"] as? Int, 5)
        XCTAssertEqual(json["writes_offset"] as? Int, 3)
        let writes = try XCTUnwrap(json["writes_journalled"] as? [[String: Any]])
        XCTAssertEqual(writes.map { $0["order"] as? Int }, [4])
    }

    func testPageOptionsAreChecked() throws {
        let id = try runID(try cli.run(["talker.lua"], expect: 1))
        for (args, message) in [
            (["--limit", "0"], "--limit takes a positive number, not '0'"),
            (["--offset", "-1"], "--offset takes a number, 0 or more, not '-1'"),
            (["--tail", "x"], "--tail takes a positive number, not 'x'"),
            (["--tail", "2", "--limit", "3"], "--tail shows the last N; it cannot be combined with --limit or --offset"),
        ] {
            let r = try cli.run(["runs", "show", id, "--output"] + args, expect: 2)
            XCTAssertTrue(r.stderr.contains(message), "\(args): \(r.stderr)")
            XCTAssertEqual(r.stdout, "")
        }
    }

    /// A run stuck where the deadline cannot stop it ends through the watchdog, which
    /// exits the process: what it said, its error and summary are kept first.
    func testARunEndedByTheWatchdogKeepsItsOutputAndHowItEnded() throws {
        try cli.file("stuck.lua", """
            recipe { name = "stuck", version = "1.0.0", description = "Test fixture: one C call past its deadline." }
            print("start")
            local r = string.find(string.rep("a", 40), string.rep("a*", 20) .. "b")
            print("never", r)
            """)
        let r = try cli.run(["stuck.lua", "--timeout", "1", "--run-id", "run_stuck"], expect: 4)
        XCTAssertEqual(r.stdout, "start\n")
        let (lines, _) = try keptLines("run_stuck")
        XCTAssertEqual(lines.map { "\($0["kind"] ?? "?"): \($0["text"] ?? "?")" }, [
            "print: start",
            "error: error: limit exceeded: timeout (1 s); raise it with --timeout or limits.timeout in the recipe manifest",
            "summary: stopped (exit 4): run run_stuck — 0 reads, 0 writes in " + (((lines.last?["text"] as? String) ?? "")
                .components(separatedBy: " in ").last ?? ""),
        ])
    }

    /// `kill -9` at several points of several attempts (soon after a batch, before any
    /// batch of the attempt, after several): each attempt's kept lines are a prefix of
    /// what that attempt printed, and the run's sequence goes on across them.
    func testAKilledRunKeepsAPrefixOfWhatItSaidAtEveryKill() throws {
        try cli.file("counter.lua", """
            recipe { name = "counter", version = "1.0.0", description = "Test fixture: counts until killed." }
            local i = 0
            while true do
              i = i + 1
              print("count " .. i)
              local t = os.clock()
              while os.clock() - t < 0.002 do end
            end
            """)
        let resume = ["runs", "resume", "run_counter", "--timeout", "120"]
        // How each attempt starts, and when it is killed: once it printed `printed`
        // lines, or once the journal holds `kept` more of its lines.
        let kills: [(args: [String], printed: Int, kept: Int)] = [
            (["counter.lua", "--run-id", "run_counter", "--timeout", "120"], 0, 300), (resume, 40, 0), (resume, 0, 600),
        ]
        var printedBy: [[String]] = []
        for kill in kills {
            let before = printedBy.isEmpty ? 0 : try keptLines("run_counter").lines.count
            let live = try cli.live(kill.args)
            var printed: [String] = []
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline, let line = live.readLine() {
                printed.append(line)
                if kill.kept == 0 && printed.count >= kill.printed { break }
                if kill.kept > 0, printed.count % 100 == 0, try keptLines("run_counter").lines.count - before >= kill.kept { break }
            }
            live.killHard()
            printedBy.append(printed + live.readRest().split(separator: "\n").map(String.init))
        }
        let all = try keptLines("run_counter").lines
        XCTAssertEqual(all.map { $0["seq"] as? Int }, Array(1...all.count).map(Optional.some), "one sequence, no gap")
        XCTAssertFalse(all.contains { $0["kind"] as? String != "print" }, "no summary: no attempt ended")
        for (index, printed) in printedBy.enumerated() {
            let texts = all.filter { $0["attempt"] as? Int == index + 1 }.map { $0["text"] as? String ?? "?" }
            XCTAssertEqual(texts, Array(printed.prefix(texts.count)), "attempt \(index + 1) kept the first lines it printed, in order")
        }
        XCTAssertGreaterThanOrEqual(all.filter { $0["attempt"] as? Int == 1 }.count, 300)
        XCTAssertGreaterThanOrEqual(all.filter { $0["attempt"] as? Int == 3 }.count, 600)
        XCTAssertEqual(all.map { $0["attempt"] as? Int ?? 0 }, all.map { $0["attempt"] as? Int ?? 0 }.sorted(), "attempts in order")
    }
}
