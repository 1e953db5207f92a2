import Foundation
import XCTest

/// Run lifecycle through the CLI: the run id is announced when a run starts; one
/// process per run id; a killed run is `interrupted`; a resume keeps what bounds the run;
/// a damaged journal is refused; an apply of a plan applied in full says so.
final class RunLifecycleTests: XCTestCase {
    /// Grants app_hub to the first `count` active users, spending `pause_ms` of CPU
    /// before each grant; prints the list param first.
    static let recipe = """
        recipe {
          name = "grant-some",
          params = {
            count = { type = "integer", default = 10 },
            pause_ms = { type = "integer", default = 0 },
            tags = { type = "list", default = {} },
          },
          needs = { "users.list", "entitlements.manage" },
        }
        print(#params.tags, params.tags[1])
        local n = 0
        for u in hub.users.list { status = "active" } do
          if n >= params.count then break end
          local t = os.clock()
          while (os.clock() - t) * 1000 < params.pause_ms do end
          hub.entitlements.grant(u.id, { application_id = "app_hub" })
          n = n + 1
        end
        print("granted " .. n)
        """

    func grants(_ cli: CLIHarness) throws -> Int {
        try cli.sandbox().all("/entitlements", "application_id=app_hub&include_inactive=true").count
    }

    /// Starts `args` and returns once run `id` has `done` journalled writes.
    func startAndWait(_ cli: CLIHarness, _ args: [String], runID id: String, done: Int) throws -> Process {
        let (p, out, err) = cli.process(args)
        out.fileHandleForReading.readabilityHandler = { _ = $0.availableData }
        err.fileHandleForReading.readabilityHandler = { _ = $0.availableData }
        try p.run()
        let deadline = Date().addingTimeInterval(30)
        while p.isRunning && Date() < deadline {
            if try cli.writeStates(id)["done"] ?? 0 >= done { return p }
            usleep(5_000)
        }
        XCTFail("run \(id) did not reach \(done) done writes while running")
        return p
    }

    func killed(_ p: Process) {
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationReason, .uncaughtSignal)
    }

    // MARK: The run id when the run starts

    func testTheRunIDIsPrintedOnStderrWithTheResumeCommand() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.resetSandbox()
        let recipe = try cli.file("grant.lua", Self.recipe)
        let r = try cli.run([recipe, "--param", "count=1", "--run-id", "run_announced"], expect: 0)
        let lines = r.stderr.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("run run_announced") }, r.stderr)
        XCTAssertEqual(lines[start], "run run_announced started; if it stops, resume it with: hubscript runs resume run_announced --state-dir "
                       + cli.stateDir.path)
        XCTAssertEqual(lines[start + 1], "done: run run_announced — 1 reads, 1 writes in " + (lines[start + 1].components(separatedBy: " in ").last ?? ""))
        try cli.resetSandbox()
        try cli.run([recipe, "--param", "count=2", "--max-writes", "1", "--run-id", "run_stopped"], expect: 4)
        let again = try cli.run(["runs", "resume", "run_stopped", "--max-writes", "2"], expect: 0)
        XCTAssertTrue(again.stderr.contains("run run_stopped started (attempt 2); if it stops, resume it with: hubscript runs resume run_stopped --state-dir "
                                            + cli.stateDir.path + "\n"),
                      again.stderr)
    }

    func testThePrintedResumeCommandNamesTheConfigurationAndStateFolderAndWorksFromAnotherFolder() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.resetSandbox()
        let recipe = try cli.file("grant.lua", Self.recipe)
        let config = try cli.file("team's config.lua", "return { default_profile = \"lab\", profiles = { lab = { sandbox = true } } }\n")
        let stopped = try cli.run([recipe, "--param", "count=2", "--max-writes", "1", "--run-id", "run_elsewhere", "--config", config], expect: 4)
        let printed = try XCTUnwrap(stopped.stderr.split(separator: "\n").first { $0.hasPrefix("run run_elsewhere started") }, stopped.stderr)
        let command = String(try XCTUnwrap(printed.components(separatedBy: "resume it with: ").last))
        XCTAssertEqual(command, "hubscript runs resume run_elsewhere --config '" + config.replacingOccurrences(of: "'", with: "'\\''")
                       + "' --state-dir " + cli.stateDir.path)
        // Pasted into a shell in another folder, where no configuration would be found
        // (with a higher --max-writes, as the stop said).
        let elsewhere = cli.root.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", "exec \"$HUBSCRIPT\" " + command.dropFirst("hubscript ".count) + " --max-writes 2"]
        shell.currentDirectoryURL = elsewhere
        shell.environment = cli.environment.merging(["HUBSCRIPT": CLIHarness.binary.path]) { $1 }
        let resumed = try CLIHarness.collect(shell).result
        XCTAssertEqual(resumed.status, 0, resumed.output)
        XCTAssertTrue(resumed.stderr.contains("run run_elsewhere started (attempt 2)"), resumed.stderr)
        XCTAssertEqual(try grants(cli), 2)
    }

    func testTheJSONStreamStartsWithTheStartEvent() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.resetSandbox()
        let recipe = try cli.file("grant.lua", Self.recipe)
        let r = try cli.run([recipe, "--param", "count=1", "--run-id", "run_json_start", "--json"], expect: 0)
        let lines = JSONLines.withoutTimestamps(r.stdout)
        XCTAssertEqual(lines.first, #"{"attempt":1,"mode":"run","recipe":"\#(recipe)","resume":"hubscript runs resume run_json_start --state-dir \#(cli.stateDir.path)","run_id":"run_json_start","schema_version":1,"type":"start"}"#)
        XCTAssertEqual(lines.dropFirst().first, #"{"text":"0\tnil","type":"print"}"#)
    }

    // MARK: One process per run id

    func testASecondProcessOnARunningRunIDIsRefusedWithExitCode2() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.resetSandbox()
        let recipe = try cli.file("grant.lua", Self.recipe)
        let first = try startAndWait(cli, [recipe, "--param", "count=40", "--param", "pause_ms=40", "--run-id", "run_once"],
                                     runID: "run_once", done: 2)
        let pid = first.processIdentifier
        let message = "error: run run_once is already running in process \(pid); wait for it to end (hubscript runs list shows it), "
            + "or stop that process and then resume with hubscript runs resume run_once\n"
        let second = try cli.run([recipe, "--param", "count=40", "--param", "pause_ms=40", "--run-id", "run_once"], expect: 2)
        XCTAssertTrue(second.stderr.hasSuffix(message), second.stderr)
        let resume = try cli.run(["runs", "resume", "run_once"], expect: 2)
        XCTAssertTrue(resume.stderr.hasSuffix(message), resume.stderr)
        let json = try cli.run(["runs", "resume", "run_once", "--json"], expect: 2)
        XCTAssertEqual(JSONLines.withoutTimestamps(json.stdout), [
            #"{"kind":"host","message":"\#(message.dropFirst(7).dropLast())","type":"error"}"#,
            #"{"exit_code":2,"failed":0,"planned":0,"reads":0,"replayed":0,"run_id":"run_once","schema_version":1,"status":"failed","type":"summary","writes":0}"#,
        ])
        XCTAssertEqual(try cli.run(["runs", "list"], expect: 0).stdout.split(separator: "\n").dropFirst().first?.prefix(49),
                       "run_once                             running     ")
        first.waitUntilExit()
        XCTAssertEqual(first.terminationStatus, 0)
        XCTAssertEqual(try grants(cli), 40, "each grant once")
        XCTAssertEqual(try cli.writeStates("run_once"), ["done": 40])
    }

    /// A run's lock file goes when the run ends; one a killed run left is removed by the
    /// next run that ends. (testASecondProcessOnARunningRunIDIsRefusedWithExitCode2: the
    /// lock still refuses a second process.)
    func testLockFilesDoNotPileUp() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.resetSandbox()
        let recipe = try cli.file("grant.lua", Self.recipe)
        let locks = cli.stateDir.appendingPathComponent("locks")
        func lockFiles() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: locks.path) }
        for n in 1...20 {
            try cli.run(n % 2 == 0 ? [recipe, "--param", "count=0", "--run-id", "run_\(n)"] : ["plan", recipe, "--param", "count=1"],
                        expect: 0)
        }
        try cli.run(["runs", "resume", "run_2"], expect: 0)
        XCTAssertEqual(try lockFiles(), [], "after 21 runs")

        let spin = try cli.file("spin.lua", "recipe { name = \"spin\" }\nprint(\"spinning\")\nwhile true do end\n")
        let child = try cli.live([spin, "--run-id", "run_spun"])
        XCTAssertEqual(child.readLine(), "spinning")
        XCTAssertEqual(try lockFiles().count, 1)
        child.killHard()
        XCTAssertEqual(try lockFiles().count, 1, "the kernel drops a killed run's lock, not its file")
        try cli.run([recipe, "--param", "count=0"], expect: 0)
        XCTAssertEqual(try lockFiles(), [], "the next run removed it")
        XCTAssertTrue(try cli.run(["runs", "show", "run_spun"], expect: 0).stdout.contains("\nmode      run, interrupted, attempts 1\n"))
    }

    // MARK: Interrupted

    func testAKilledRunIsListedAsInterruptedAndResumes() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.resetSandbox()
        let recipe = try cli.file("grant.lua", Self.recipe)
        let p = try startAndWait(cli, [recipe, "--param", "count=20", "--param", "pause_ms=20", "--run-id", "run_killed"],
                                 runID: "run_killed", done: 3)
        killed(p)
        let list = try cli.run(["runs", "list"], expect: 0)
        XCTAssertEqual(list.stdout.split(separator: "\n").dropFirst().first?.prefix(55),
                       "run_killed                           interrupted run   ", list.stdout)
        let show = try cli.run(["runs", "show", "run_killed"], expect: 0)
        XCTAssertTrue(show.stdout.contains("\nmode      run, interrupted, attempts 1\n"), show.stdout)

        // A kill in the middle of a grant leaves its key in flight at the Hub for about a
        // second (idempotency_key_in_flight): resume until it succeeds, as a user would.
        var resumed = try cli.run(["runs", "resume", "run_killed"])
        var passes = 2
        while resumed.status != 0 && resumed.stderr.contains("idempotency_key_in_flight") && passes < 5 {
            sleep(1)
            resumed = try cli.run(["runs", "resume", "run_killed"])
            passes += 1
        }
        XCTAssertEqual(resumed.status, 0, resumed.output)
        XCTAssertTrue(resumed.stdout.hasSuffix("granted 20\n"), resumed.output)
        XCTAssertEqual(try grants(cli), 20)
        let after = try cli.run(["runs", "show", "run_killed", "--json"], expect: 0)
        let run = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(after.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(run["status"] as? String, "succeeded")
        XCTAssertEqual(run["attempts"] as? Int, passes)
        // Every pass counts, the killed one included: the writes are all the sends made.
        let writes = try XCTUnwrap(run["writes_journalled"] as? [[String: Any]])
        XCTAssertEqual(writes.count, 20)
        XCTAssertEqual(run["writes"] as? Int, writes.reduce(0) { $0 + ($1["attempts"] as? Int ?? 0) })
        XCTAssertGreaterThanOrEqual(run["writes"] as? Int ?? 0, 20)
    }

    /// Reads 7 users and a list, grants once and spins (killed there), the first time
    /// only (a checkpoint says it spun). A resume is served the reads the killed pass made,
    /// so it decides as that pass did: it grants (replayed), and ends.
    static let readThenSpin = """
        recipe { name = "read-then-spin", needs = { "users.list", "entitlements.manage" } }
        for _ = 1, 7 do hub.users.get("usr_admin") end
        local held = false
        for _ in hub.entitlements.for_user("usr_ada", { application_id = "app_hub" }) do held = true end
        if not held then
          hub.entitlements.grant("usr_ada", { application_id = "app_hub" })
          if state.get("spun") == nil then
            state.set("spun", true)
            print("granted; spinning")
            while true do end
          end
        end
        print(held and "held" or "granted")
        """

    /// The reads of a pass killed with SIGKILL are counted (the journal notes the run's
    /// totals with the commits it makes): shown as the pass left them, then added to the
    /// resume's.
    func testAKilledPassesReadsAreCounted() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.resetSandbox()
        let recipe = try cli.file("spin.lua", Self.readThenSpin)
        let child = try cli.live([recipe, "--run-id", "run_reads"])
        XCTAssertEqual(child.readLine(), "granted; spinning")
        child.killHard()

        let killed = try cli.json(["runs", "show", "run_reads", "--json"])
        XCTAssertEqual(killed["status"] as? String, "interrupted")
        XCTAssertTrue(killed["exit_code"] is NSNull)
        // 7 gets and the list (2 reads: its one page, and the call that found its end),
        // noted before the grant was journalled.
        XCTAssertEqual(killed["reads"] as? Int, 9)

        let resumed = try cli.run(["runs", "resume", "run_reads", "--json"], expect: 0)
        XCTAssertTrue(resumed.stdout.contains(#"{"text":"granted","#), resumed.stdout)
        let summary = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data((resumed.stdout.split(separator: "\n").last ?? "").utf8))
                                    as? [String: Any])
        // The 7 gets and the list's page come from the killed pass's record: none is sent.
        XCTAssertEqual(summary["reads"] as? Int, 0)
        XCTAssertEqual(summary["reads_replayed"] as? Int, 8)
        XCTAssertEqual(summary["writes"] as? Int, 0)
        XCTAssertEqual(summary["replayed"] as? Int, 1, "the grant")
        let after = try cli.json(["runs", "show", "run_reads", "--json"])
        XCTAssertEqual(after["status"] as? String, "succeeded")
        XCTAssertEqual(after["exit_code"] as? Int, 0)
        XCTAssertEqual(after["attempts"] as? Int, 2)
        XCTAssertEqual(after["reads"] as? Int, 9, "the killed pass's reads; the resume sent none")
        XCTAssertEqual(after["writes"] as? Int, 2, "the killed pass's grant and checkpoint")
    }

    // MARK: What bounds a run is kept by resume

    func testAResumedRunKeepsMaxWrites() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.resetSandbox()
        let recipe = try cli.file("grant.lua", Self.recipe)
        let first = try cli.run([recipe, "--param", "count=20", "--max-writes", "5", "--run-id", "run_capped"], expect: 4)
        XCTAssertTrue(first.stderr.contains("error: limit exceeded: writes: the recipe's limit is 5 (limits.writes / --max-writes); stopped before write 6: POST /users/"),
                      first.stderr)
        let resumed = try cli.run(["runs", "resume", "run_capped"], expect: 4)
        XCTAssertTrue(resumed.stderr.contains("error: limit exceeded: writes: the recipe's limit is 5 (limits.writes / --max-writes); stopped before write 6: POST /users/"),
                      resumed.stderr)
        // The resume is served the first pass's list page from the run's record.
        XCTAssertTrue(resumed.stderr.contains("stopped: run run_capped — 0 reads, 1 reads replayed, 0 writes, 5 replayed in "), resumed.stderr)
        XCTAssertEqual(try grants(cli), 5)
        let show = try cli.run(["runs", "show", "run_capped"], expect: 0)
        XCTAssertTrue(show.stdout.contains("\nlimits    max writes 5, the manifest's timeout\n"), show.stdout)
        // An explicit --max-writes on a resume by --run-id replaces the journalled one.
        try cli.run([recipe, "--param", "count=20", "--max-writes", "7", "--run-id", "run_capped"], expect: 4)
        XCTAssertEqual(try grants(cli), 7)
    }

    func testAResumedRunKeepsTimeoutAndAListItemWithAComma() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.resetSandbox()
        let recipe = try cli.file("grant.lua", Self.recipe)
        let params = try cli.file("params.json", #"{"tags": ["a,b", "c"], "count": 3}"#)
        let first = try cli.run([recipe, "--params-file", params, "--max-writes", "0", "--timeout", "30", "--run-id", "run_comma"], expect: 4)
        XCTAssertEqual(first.stdout, "2\ta,b\n")
        let resumed = try cli.run(["runs", "resume", "run_comma"], expect: 4)
        XCTAssertEqual(resumed.stdout, "2\ta,b\n")
        let show = try cli.run(["runs", "show", "run_comma"], expect: 0)
        XCTAssertTrue(show.stdout.contains("""

            params    {"count":3,"pause_ms":0,"tags":["a,b","c"]}
            """), show.stdout)
        XCTAssertTrue(show.stdout.contains("\nlimits    max writes 0, timeout 30 s\n"), show.stdout)
        XCTAssertTrue(show.stdout.contains("\nmode      run, stopped, attempts 2\n"), show.stdout)
    }

    /// The first pass sets a checkpoint and fails; a resume finds the checkpoint (the
    /// state is read live) and spins, so only the run's journalled --timeout (1 s, not the
    /// manifest's 5) stops it.
    func testAResumedRunIsStoppedByItsJournalledTimeout() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.resetSandbox()
        let recipe = try cli.file("spin.lua", """
            recipe { name = "spin-second", limits = { timeout = 5 } }
            if state.get("failed_once") then
              while true do end
            end
            state.set("failed_once", true)
            error("first pass")
            """)
        try cli.run([recipe, "--timeout", "1", "--run-id", "run_timed"], expect: 1)
        let resumed = try cli.run(["runs", "resume", "run_timed"], expect: 4)
        XCTAssertTrue(resumed.stderr.contains("error: limit exceeded: timeout (1 s); raise it with --timeout or limits.timeout in the recipe manifest\n"),
                      resumed.stderr)
    }

    // MARK: The journal's integrity

    func journalFile(_ cli: CLIHarness) -> URL {
        cli.stateDir.appendingPathComponent("journal/journal.sqlite")
    }

    func testAZeroByteJournalIsReportedNotTreatedAsEmpty() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.resetSandbox()
        let recipe = try cli.file("grant.lua", Self.recipe)
        try cli.run([recipe, "--param", "count=1"], expect: 0)
        let path = journalFile(cli).path
        try Data().write(to: journalFile(cli))
        let r = try cli.run([recipe, "--param", "count=1"], expect: 2)
        XCTAssertTrue(r.stderr.hasSuffix("""
            error: the journal \(path) is empty (0 bytes): it was truncated or replaced, and the runs it recorded are lost. \
            Move it aside (mv \(path) \(path).empty) and run again to start a new journal.

            """), r.stderr)
        XCTAssertEqual(try Data(contentsOf: journalFile(cli)).count, 0, "left as it was")
        try cli.run(["runs", "resume", "run_x"], expect: 2)
    }

    func testADamagedJournalIsRefusedBeforeAnyWrite() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.resetSandbox()
        let recipe = try cli.file("grant.lua", Self.recipe)
        try cli.run([recipe, "--param", "count=30", "--run-id", "run_before"], expect: 0)
        let path = journalFile(cli).path
        // Overwrite every page after the first (the schema) with garbage.
        var data = try Data(contentsOf: journalFile(cli))
        XCTAssertGreaterThan(data.count, 8192)
        for i in 4096..<data.count { data[i] = UInt8(truncatingIfNeeded: i &* 31) }
        try data.write(to: journalFile(cli))
        let before = try grants(cli)
        let r = try cli.run([recipe, "--param", "count=40"], expect: 2)
        XCTAssertTrue(r.stderr.contains("error: the journal \(path) is damaged (SQLite: "), r.stderr)
        XCTAssertTrue(r.stderr.hasSuffix("""
            ); nothing was run. Move it aside (mv \(path) \(path).damaged) and run again to start a new journal; \
            runs recorded in it cannot be resumed.

            """), r.stderr)
        let resume = try cli.run(["runs", "resume", "run_before"], expect: 2)
        XCTAssertTrue(resume.stderr.contains("is damaged (SQLite: "), resume.stderr)
        XCTAssertEqual(try grants(cli), before, "nothing sent")
    }

    // MARK: Apply of a plan applied in full

    func testApplyingAPlanAppliedInFullSaysSo() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.resetSandbox()
        let recipe = try cli.file("grant.lua", Self.recipe)
        let plan = cli.root.appendingPathComponent("plan.json").path
        try cli.run(["plan", recipe, "--param", "count=3", "--out", plan], expect: 0)
        try cli.run(["apply", plan], expect: 0)
        XCTAssertEqual(try grants(cli), 3)
        let again = try cli.run(["apply", plan], expect: 0)
        let runID = try XCTUnwrap(again.stderr.range(of: "(run ").map { again.stderr[$0.upperBound...].prefix { $0 != "," } })
        XCTAssertTrue(again.stderr.contains("\napply: this plan was already applied in full (run \(runID), 3 writes, finished 20"),
                      again.stderr)
        XCTAssertTrue(again.stderr.hasSuffix("Z); nothing was sent\n"), again.stderr)
        XCTAssertEqual(try grants(cli), 3)
    }
}

/// `--json` output lines with their `ts` fields removed (after checking their shape),
/// so tests can compare the rest exactly.
enum JSONLines {
    static let timestamp = try! NSRegularExpression(pattern: #""ts":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z","#)

    static func withoutTimestamps(_ stdout: String, file: StaticString = #filePath, line: UInt = #line) -> [String] {
        stdout.split(separator: "\n").map { raw in
            let text = String(raw)
            let range = NSRange(text.startIndex..., in: text)
            XCTAssertEqual(timestamp.numberOfMatches(in: text, range: range), 1, "one ts field in \(text)", file: file, line: line)
            return timestamp.stringByReplacingMatches(in: text, range: range, withTemplate: "")
        }
    }
}
