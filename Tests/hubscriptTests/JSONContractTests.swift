import Foundation
import XCTest

/// The `--json` contract of docs/json-events.md, through the CLI: exact
/// lines (their `ts` checked for shape, then removed).
final class JSONContractTests: XCTestCase {
    /// Grants app_hub to usr_ada twice: the second grant fails (already held) and the
    /// recipe goes on.
    static let recipe = """
        recipe {
          name = "grant-twice",
          params = { count = { type = "integer", default = 1 } },
          needs = { "entitlements.manage" },
        }
        for i = 1, params.count do
          local ok, err = pcall(hub.entitlements.grant, "usr_ada", { application_id = "app_hub" })
          print(i, ok)
        end
        log.info("done", { n = params.count })
        """

    func testEveryLineHasATimestampTheStartComesFirstAndFailedWritesAreEvents() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.resetSandbox()
        let recipe = try cli.file("twice.lua", Self.recipe)
        let r = try cli.run([recipe, "--param", "count=2", "--run-id", "run_contract", "--json"], expect: 0)
        let lines = JSONLines.withoutTimestamps(r.stdout)   // asserts one ts per line
        XCTAssertEqual(lines.count, 7, r.stdout)
        guard lines.count == 7 else { return }
        XCTAssertEqual(lines[0], #"{"attempt":1,"mode":"run","recipe":"\#(recipe)","resume":"hubscript runs resume run_contract --state-dir \#(cli.stateDir.path)","run_id":"run_contract","schema_version":1,"type":"start"}"#)
        XCTAssertTrue(lines[1].hasPrefix(#"{"key":"hs1-"#), lines[1])
        XCTAssertTrue(lines[1].hasSuffix(#"","method":"POST","path":"/users/usr_ada/entitlements","planned":false,"replayed":false,"summary":"grant app_hub to usr_ada","type":"write"}"#), lines[1])
        XCTAssertEqual(lines[2], #"{"text":"1\ttrue","type":"print"}"#)
        XCTAssertEqual(lines[3], #"{"code":"entitlement_already_exists","message":"usr_ada already holds a live entitlement to app_hub.","method":"POST","path":"/users/usr_ada/entitlements","status":409,"summary":"grant app_hub to usr_ada","type":"write_failed"}"#)
        XCTAssertEqual(lines[4], #"{"text":"2\tfalse","type":"print"}"#)
        XCTAssertEqual(lines[5], #"{"fields":{"n":2},"level":"info","message":"done","type":"log"}"#)
        let summary = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(lines[6].utf8)) as? [String: Any])
        XCTAssertEqual(summary["type"] as? String, "summary")
        XCTAssertEqual(summary["run_id"] as? String, "run_contract")
        XCTAssertEqual(summary["exit_code"] as? Int, 0)
        XCTAssertEqual(summary["schema_version"] as? Int, 1)
        XCTAssertEqual([summary["reads"], summary["writes"], summary["replayed"], summary["planned"], summary["failed"]].map { $0 as? Int },
                       [0, 2, 0, 0, 1])
    }

    func testUsageErrorsAreJSONUnderJSON() throws {
        let cli = try CLIHarness(testCase: self)
        let r = try cli.run(["run", "x.lua", "--json", "--max-writes", "lots"], expect: 2)
        XCTAssertEqual(JSONLines.withoutTimestamps(r.stdout), [
            #"{"command":"run","kind":"usage","message":"--max-writes takes a whole number, got 'lots'","type":"error"}"#,
            #"{"exit_code":2,"failed":0,"planned":0,"reads":0,"replayed":0,"run_id":null,"schema_version":1,"status":"failed","type":"summary","writes":0}"#,
        ])
        XCTAssertEqual(r.stderr, "hubscript run: --max-writes takes a whole number, got 'lots'\nRun 'hubscript run --help' for usage.\n")
        let plain = try cli.run(["run", "x.lua", "--max-writes", "lots"], expect: 2)
        XCTAssertEqual(plain.stdout, "")
    }

    func testAResumeOfAnUnknownRunIsJSONToo() throws {
        let cli = try CLIHarness(testCase: self)
        let r = try cli.run(["runs", "resume", "run_nope", "--json"], expect: 2)
        XCTAssertEqual(JSONLines.withoutTimestamps(r.stdout), [
            #"{"kind":"host","message":"no run run_nope in the journal (hubscript runs list shows the recent ones)","type":"error"}"#,
            #"{"exit_code":2,"failed":0,"planned":0,"reads":0,"replayed":0,"run_id":"run_nope","schema_version":1,"status":"failed","type":"summary","writes":0}"#,
        ])
        XCTAssertEqual(r.stderr, "error: no run run_nope in the journal (hubscript runs list shows the recent ones)\n")
    }

    func testCapabilityErrorsCarryTheMissingPermissionsAsAnArray() throws {
        let cli = try CLIHarness(testCase: self)
        let hubState = cli.root.appendingPathComponent("hub-state")
        try cli.resetSandbox(state: hubState)
        let server = try ServedSandbox(cli, state: hubState, faults: "none")
        defer { server.stop() }
        let config = try cli.file("support.config.lua", """
            return { profiles = { support = { hub_url = "\(server.url)", api_key = "satk_test_support_sandbox_00000000000000",
                                              api_key_id = "key_support_ro", rate_limit_per_minute = 0 } } }
            """)
        let recipe = try cli.file("twice.lua", Self.recipe)
        let r = try cli.run([recipe, "--config", config, "--run-id", "run_denied", "--json"], expect: 3)
        let lines = JSONLines.withoutTimestamps(r.stdout)
        XCTAssertEqual(lines.count, 2, r.output)
        guard lines.count == 2 else { return }
        let error = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        XCTAssertEqual(error["type"] as? String, "error")
        let structured = try XCTUnwrap(error["error"] as? [String: Any], lines[0])
        XCTAssertEqual(structured["code"] as? String, "capability_denied")
        XCTAssertEqual(structured["missing"] as? [String], ["entitlements.manage"])
        XCTAssertEqual(structured["profile"] as? String, "support")
        XCTAssertEqual(lines[1], #"{"exit_code":3,"failed":0,"planned":0,"reads":0,"replayed":0,"run_id":"run_denied","schema_version":1,"status":"failed","type":"summary","writes":0}"#)
    }

    func testCheckTakesJSON() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.file("good.lua", Self.recipe)
        try cli.file("bad.lua", "recipe { name = 1 }\n")
        let (good, bad) = ("good.lua", "bad.lua")
        let r = try cli.hubscript("check", good, bad, "--json")
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.stderr, "")
        XCTAssertEqual(JSONLines.withoutTimestamps(r.stdout), [
            // The recipe's `err` is never read: a warning, and the file still passes.
            #"{"code":"unused_local","column":13,"file":"\#(good)","line":7,"message":"unused local 'err' (remove it, or name it _err if it is meant to be unused)","severity":"warning","type":"finding"}"#,
            #"{"errors":0,"file":"\#(good)","ok":true,"problem":null,"type":"check","warnings":1}"#,
            #"{"errors":0,"file":"\#(bad)","ok":false,"problem":"\#(bad):1: manifest: 'name' must be a non-empty string","type":"check","warnings":0}"#,
            #"{"exit_code":1,"failed":0,"failed_files":1,"passed":1,"planned":0,"reads":0,"replayed":0,"run_id":null,"schema_version":1,"status":"failed","type":"summary","writes":0}"#,
        ])
    }

    func testRunsListAndShowTakeJSON() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.resetSandbox()
        let recipe = try cli.file("twice.lua", Self.recipe)
        try cli.run([recipe, "--run-id", "run_listed", "--max-writes", "9"], expect: 0)
        let list = try cli.run(["runs", "list", "--json"], expect: 0)
        let lines = JSONLines.withoutTimestamps(list.stdout)
        XCTAssertEqual(lines.count, 1)
        let run = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data((lines.first ?? "").utf8)) as? [String: Any])
        XCTAssertEqual(run["type"] as? String, "run")
        XCTAssertEqual(run["run_id"] as? String, "run_listed")
        XCTAssertEqual(run["status"] as? String, "succeeded")
        XCTAssertEqual(run["max_writes"] as? Int, 9)
        XCTAssertTrue(run["timeout_seconds"] is NSNull)
        XCTAssertEqual(run["writes"] as? Int, 1)
        XCTAssertEqual(run["params"] as? [String: Int], ["count": 1])
        let show = try cli.run(["runs", "show", "run_listed", "--json"], expect: 0)
        let shown = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [String: Any])
        let writes = try XCTUnwrap(shown["writes_journalled"] as? [[String: Any]])
        XCTAssertEqual(writes.map { "\($0["seq"] ?? "") \($0["state"] ?? "") \($0["method"] ?? "") \($0["path"] ?? "")" },
                       ["1 done POST /users/usr_ada/entitlements"])
    }

    /// `runs list --json` and `runs show --json` carry what a run's `summary` has: the run
    /// id, the counts (over every pass), the exit code, the output folder and the schema
    /// version; and the attempts and times.
    func testRunsListAndShowCarryTheSummaryFields() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.resetSandbox()
        let recipe = try cli.file("twice.lua", Self.recipe)
        let summaryLine = try cli.run([recipe, "--param", "count=2", "--run-id", "run_summed", "--json"], expect: 0).stdout
            .split(separator: "\n").last.map(String.init) ?? ""
        let summary = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(summaryLine.utf8)) as? [String: Any])
        try cli.run([recipe, "--param", "count=2", "--max-writes", "0", "--run-id", "run_capped"], expect: 4)

        let list = try cli.run(["runs", "list", "--json"], expect: 0)
        let runs = try JSONLines.withoutTimestamps(list.stdout).map {
            try XCTUnwrap(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        XCTAssertEqual(runs.map { $0["run_id"] as? String }, ["run_capped", "run_summed"])
        let shown = try cli.json(["runs", "show", "run_summed", "--json"])
        for run in [runs[1], shown] {
            // Every field of the summary but those of one pass (duration, memory, exports) and its `ok`/`failed` status.
            for key in ["run_id", "exit_code", "reads", "writes", "replayed", "planned", "failed", "output_folder", "schema_version"] {
                XCTAssertEqual("\(run[key] ?? "missing")", "\(summary[key] ?? "missing")", key)
            }
            XCTAssertEqual(run["status"] as? String, "succeeded")
            XCTAssertEqual(run["attempts"] as? Int, 1)
            for key in ["started_at", "finished_at"] {
                XCTAssertNotNil((run[key] as? String)?.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$"#, options: .regularExpression),
                                "\(key): \(run[key] ?? "missing")")
            }
        }
        XCTAssertEqual(Set(runs[1].keys), ["type", "run_id", "status", "exit_code", "mode", "recipe", "recipe_sha256", "params",
                                           "profile", "attempts", "started_at", "finished_at", "reads", "writes", "replayed",
                                           "planned", "failed", "max_writes", "timeout_seconds", "output_folder", "schema_version"])
        XCTAssertEqual(Set(shown.keys), Set(runs[1].keys).union(["ts", "writes_journalled", "reads_recorded", "reads_recorded_bytes",
                                                                         "writes_total", "writes_offset", "output_lines"]))
        XCTAssertEqual(runs[0]["status"] as? String, "stopped")
        XCTAssertEqual(runs[0]["exit_code"] as? Int, 4)
    }

    func testPlanDetailedExitCodeIs0WithoutChangesAnd5WithChanges() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.resetSandbox()
        let recipe = try cli.file("twice.lua", Self.recipe)
        try cli.run(["plan", recipe, "--param", "count=0", "--detailed-exitcode"], expect: 0)
        try cli.run(["plan", recipe, "--param", "count=1"], expect: 0)
        try cli.run(["plan", recipe, "--param", "count=1", "--detailed-exitcode"], expect: 5)
        let json = try cli.run(["plan", recipe, "--param", "count=1", "--detailed-exitcode", "--json"], expect: 5)
        XCTAssertTrue(JSONLines.withoutTimestamps(json.stdout).last?.contains(#""exit_code":5,"#) == true, json.stdout)
        // An error keeps its own code.
        try cli.run(["plan", recipe, "--param", "count=x", "--detailed-exitcode"], expect: 2)
    }
}

/// Usage errors are JSON under `--json` at every level: `hubscript` itself, a command
/// group (`runs`, `sandbox`) and a command; the text for people stays on stderr.
final class UsageErrorJSONTests: XCTestCase {
    private var cli: CLIHarness!

    override func setUpWithError() throws {
        try super.setUpWithError()
        cli = try CLIHarness(testCase: self)
    }

    override func tearDown() {
        cli = nil
        super.tearDown()
    }

    static let summary = #"{"exit_code":2,"failed":0,"planned":0,"reads":0,"replayed":0,"run_id":null,"schema_version":1,"status":"failed","type":"summary","writes":0}"#

    /// Runs `args`, expecting exit code 2, exactly `stderr`, and on stdout an `error`
    /// (kind `usage`, `command`, `message`) then the summary.
    func assertUsageError(_ args: [String], command: String?, message: String, stderr: String,
                          file: StaticString = #filePath, line: UInt = #line) throws {
        let result = try CLIHarness.run(args, in: cli.root)
        let commandJSON = command.map { #""\#($0)""# } ?? "null"
        XCTAssertEqual(JSONLines.withoutTimestamps(result.stdout, file: file, line: line), [
            #"{"command":\#(commandJSON),"kind":"usage","message":"\#(message)","type":"error"}"#, Self.summary,
        ], file: file, line: line)
        XCTAssertEqual(result.stderr, stderr, file: file, line: line)
        XCTAssertEqual(result.status, 2, file: file, line: line)
    }

    func testAnUnknownSubcommandOfAGroup() throws {
        try assertUsageError(["runs", "lst", "--json"], command: "runs", message: "unknown subcommand 'lst' (did you mean 'list'?)",
                             stderr: "hubscript runs: unknown subcommand 'lst' (did you mean 'list'?)\nRun 'hubscript runs --help' for the list.\n")
    }

    func testAnOptionBeforeTheSubcommandOfAGroup() throws {
        try assertUsageError(["runs", "--json", "list", "--limit", "3"], command: "runs",
                             message: "options go after the subcommand: hubscript runs list --limit 3 --json",
                             stderr: "hubscript runs: options go after the subcommand: hubscript runs list --limit 3 --json\nRun 'hubscript runs --help' for the list.\n")
        try assertUsageError(["runs", "--json"], command: "runs",
                             message: "missing the subcommand: write hubscript runs <subcommand> --json",
                             stderr: "hubscript runs: missing the subcommand: write hubscript runs <subcommand> --json\nRun 'hubscript runs --help' for the list.\n")
    }

    func testTopLevelUsageErrors() throws {
        try assertUsageError(["--json", "runs", "list"], command: nil, message: "options go after the subcommand: hubscript runs list --json",
                             stderr: "hubscript: options go after the subcommand: hubscript runs list --json\nRun 'hubscript --help' for the list of subcommands.\n")
        try assertUsageError(["frobnicate", "--json"], command: nil, message: "unknown subcommand 'frobnicate'",
                             stderr: "hubscript: unknown subcommand 'frobnicate'\nRun 'hubscript --help' for the list of subcommands.\n")
        try assertUsageError(["--json"], command: nil, message: "missing the subcommand: write hubscript <subcommand> --json",
                             stderr: "hubscript: missing the subcommand: write hubscript <subcommand> --json\nRun 'hubscript --help' for the list of subcommands.\n")
    }

    func testAMissingArgumentOfAGroupsCommand() throws {
        try assertUsageError(["runs", "show", "--json"], command: "runs show", message: "expected one run ID",
                             stderr: "hubscript runs show: expected one run ID\nRun 'hubscript runs show --help' for usage.\n")
        try assertUsageError(["runs", "resume", "--json"], command: "runs resume", message: "expected one run ID",
                             stderr: "hubscript runs resume: expected one run ID\nRun 'hubscript runs resume --help' for usage.\n")
    }

    func testWithoutJSONStdoutStaysEmpty() throws {
        let result = try CLIHarness.run(["runs", "lst"], in: cli.root)
        XCTAssertEqual(result.stdout, "")
        XCTAssertEqual(result.status, 2)
        let grouped = try CLIHarness.run(["runs", "--limit", "3"], in: cli.root)
        XCTAssertEqual(grouped.stdout, "")
        XCTAssertEqual(grouped.stderr, "hubscript runs: missing the subcommand: write hubscript runs <subcommand> --limit 3\nRun 'hubscript runs --help' for the list.\n")
    }
}
