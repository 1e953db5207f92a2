import Foundation
import XCTest

/// --quiet, --verbose, --no-progress and the HUBSCRIPT_* environment
/// variables, through the binary.
final class OutputOptionsCLITests: XCTestCase {
    private var cli: CLIHarness!

    override func setUpWithError() throws {
        try super.setUpWithError()
        cli = try CLIHarness(testCase: self)
    }

    override func tearDown() {
        cli = nil
        super.tearDown()
    }

    /// Runs hubscript in the test's folder with `environment` on top of a clean one
    /// (no HUBSCRIPT_* from the caller, XDG folders inside the test's folder); stderr
    /// whole, run start line included.
    func run(_ args: [String], environment extra: [String: String] = [:]) throws -> CLIHarness.Result {
        let environment = try CLIHarness.isolatedEnvironment(scratch: cli.root.appendingPathComponent("xdg"),
                                                             sandboxConfig: false, extra: extra)
        return try CLIHarness.run(args, in: cli.root, environment: environment)
    }

    /// Run ids, times and the sandbox path made stable.
    func stable(_ text: String) -> String {
        text.replacingOccurrences(of: #"run_[0-9TZ]+_[0-9a-f]+"#, with: "RUN", options: .regularExpression)
            .replacingOccurrences(of: #"in [0-9.]+ s\n"#, with: "in T s\n", options: .regularExpression)
            .replacingOccurrences(of: #"\([0-9]+ ms\)"#, with: "(N ms)", options: .regularExpression)
            .replacingOccurrences(of: cli.root.path, with: "DIR")
    }

    static let recipe = """
    recipe { name = "r", needs = { "users.list" } }
    log.debug("counting", { step = 1 })
    print(hub.users.get("usr_admin") ~= nil)
    """

    func testVerboseShowsDebugLogsAndEachHubCall() throws {
        try cli.file("r.lua", Self.recipe)
        let result = try run(["run", "r.lua", "--verbose", "--state-dir", "state"])
        XCTAssertEqual(result.stdout, "true\n")
        XCTAssertEqual(stable(result.stderr), """
        hubscript: no configuration found; using the built-in sandbox Hub (DIR/state/sandbox/hub.sqlite). See README, "Profiles".
        hub: GET /api-keys/key_jobs → 200 (N ms)
        run RUN started; if it stops, resume it with: hubscript runs resume RUN --state-dir DIR/state
        [debug] counting step=1
        hub: GET /users/usr_admin → 200 (N ms)
        done: run RUN — 1 reads, 0 writes in T s

        """)
        XCTAssertEqual(result.status, 0)
    }

    func testQuietHasNoNoticeAndDefaultHasNoDebug() throws {
        try cli.file("r.lua", Self.recipe)
        let quiet = try run(["run", "r.lua", "--quiet", "--state-dir", "state"])
        XCTAssertEqual(stable(quiet.stderr), "done: run RUN — 1 reads, 0 writes in T s\n")
        XCTAssertEqual(quiet.stdout, "true\n")
        let plain = try run(["r.lua", "--no-progress", "--state-dir", "state"])
        XCTAssertEqual(stable(plain.stderr), """
        hubscript: no configuration found; using the built-in sandbox Hub (DIR/state/sandbox/hub.sqlite). See README, "Profiles".
        run RUN started; if it stops, resume it with: hubscript runs resume RUN --state-dir DIR/state
        done: run RUN — 1 reads, 0 writes in T s

        """)
        let both = try run(["run", "r.lua", "--quiet", "--verbose"])
        XCTAssertEqual(both.stderr, "hubscript run: --quiet and --verbose cannot be used together\nRun 'hubscript run --help' for usage.\n")
        XCTAssertEqual(both.status, 2)
    }

    /// Stops its first pass (a checkpoint per `id` says it did), so a resume has a run to finish.
    static let stopsOnce = """
    recipe { name = "r2", params = { id = { type = "string" } }, needs = { "users.list" } }
    log.debug("counting", { step = 1 })
    print(hub.users.get("usr_admin") ~= nil)
    if state.get("stopped " .. params.id) == nil then
      state.set("stopped " .. params.id, true)
      error("the first pass stops here", 0)
    end
    """

    /// `runs resume` takes --quiet, --verbose and --no-progress with a run's meaning. (The
    /// resumed pass is served the read its first pass made: it sends none.)
    func testRunsResumeTakesQuietVerboseAndNoProgress() throws {
        try cli.file("r2.lua", Self.stopsOnce)
        func stopped(_ id: String) throws {
            let first = try run(["run", "r2.lua", "--param", "id=\(id)", "--quiet", "--run-id", id, "--state-dir", "state"])
            XCTAssertEqual(first.status, 1, first.stderr)
        }
        try stopped("run_q")
        let quiet = try run(["runs", "resume", "run_q", "--quiet", "--state-dir", "state"])
        XCTAssertEqual(quiet.stdout, "true\n")
        XCTAssertEqual(stable(quiet.stderr), "done: run run_q — 0 reads, 1 reads replayed, 0 writes in T s\n")
        XCTAssertEqual(quiet.status, 0)
        try stopped("run_v")
        let verbose = try run(["runs", "resume", "run_v", "--verbose", "--state-dir", "state"])
        XCTAssertEqual(verbose.stdout, "true\n")
        XCTAssertEqual(stable(verbose.stderr), """
        hubscript: no configuration found; using the built-in sandbox Hub (DIR/state/sandbox/hub.sqlite). See README, "Profiles".
        hub: GET /api-keys/key_jobs → 200 (N ms)
        run run_v started (attempt 2); if it stops, resume it with: hubscript runs resume run_v --state-dir DIR/state
        [debug] counting step=1
        done: run run_v — 0 reads, 1 reads replayed, 0 writes in T s

        """)
        try stopped("run_p")
        let plain = try run(["runs", "resume", "run_p", "--no-progress", "--state-dir", "state"])
        XCTAssertEqual(stable(plain.stderr), """
        hubscript: no configuration found; using the built-in sandbox Hub (DIR/state/sandbox/hub.sqlite). See README, "Profiles".
        run run_p started (attempt 2); if it stops, resume it with: hubscript runs resume run_p --state-dir DIR/state
        done: run run_p — 0 reads, 1 reads replayed, 0 writes in T s

        """)
        let both = try run(["runs", "resume", "run_p", "--quiet", "--verbose", "--state-dir", "state"])
        XCTAssertEqual(both.stderr, "hubscript runs resume: --quiet and --verbose cannot be used together\nRun 'hubscript runs resume --help' for usage.\n")
        XCTAssertEqual(both.status, 2)
        try stopped("run_j")
        let json = try run(["runs", "resume", "run_j", "--json", "--quiet", "--state-dir", "state"])
        XCTAssertEqual(json.stderr, "")
        XCTAssertEqual(JSONLines.withoutTimestamps(json.stdout).dropFirst().first, #"{"text":"true","type":"print"}"#)
        XCTAssertEqual(json.status, 0)
    }

    func testStateDirFromTheEnvironmentAndTheFlagWins() throws {
        try cli.file("r.lua", Self.recipe)
        let fromEnv = try run(["run", "r.lua", "--quiet"], environment: ["HUBSCRIPT_STATE_DIR": "envstate"])
        XCTAssertEqual(fromEnv.status, 0, fromEnv.stderr)
        let fm = FileManager.default
        XCTAssertTrue(fm.fileExists(atPath: cli.root.appendingPathComponent("envstate/sandbox/hub.sqlite").path))
        let flagWins = try run(["run", "r.lua", "--quiet", "--state-dir", "flagstate"], environment: ["HUBSCRIPT_STATE_DIR": "other"])
        XCTAssertEqual(flagWins.status, 0, flagWins.stderr)
        XCTAssertTrue(fm.fileExists(atPath: cli.root.appendingPathComponent("flagstate/sandbox/hub.sqlite").path))
        XCTAssertFalse(fm.fileExists(atPath: cli.root.appendingPathComponent("other").path))
    }

    func testProfileAndConfigFromTheEnvironmentAndTheFlagWins() throws {
        try cli.file("r.lua", Self.recipe)
        try cli.file("c.lua", "return { profiles = { lab = { sandbox = true } } }\n")
        let env = ["HUBSCRIPT_CONFIG": "c.lua", "HUBSCRIPT_PROFILE": "nope", "HUBSCRIPT_STATE_DIR": "state"]
        let fromEnv = try run(["run", "r.lua"], environment: env)
        XCTAssertEqual(stable(fromEnv.stderr), "error: no profile 'nope' in DIR/c.lua (profiles: lab, or 'sandbox')\n")
        XCTAssertEqual(fromEnv.status, 2)
        let flagWins = try run(["run", "r.lua", "--profile", "lab"], environment: env)
        XCTAssertEqual(stable(flagWins.stderr),
                       "run RUN started; if it stops, resume it with: hubscript runs resume RUN\ndone: run RUN — 1 reads, 0 writes in T s\n")
        XCTAssertEqual(flagWins.status, 0)
    }
}

/// The progress line on a real terminal (`script` gives the run a pseudo-terminal).
final class ProgressLineCLITests: XCTestCase {
    private var cli: CLIHarness!

    override func setUpWithError() throws {
        try super.setUpWithError()
        cli = try CLIHarness(testCase: self)
    }

    override func tearDown() {
        cli = nil
        super.tearDown()
    }

    /// access-review under a pseudo-terminal: stdout and stderr, as the terminal got them.
    func accessReviewOnATerminal(_ extra: String = "") throws -> String {
        let recipe = CLIHarness.repoRoot.appendingPathComponent("recipes/access-review.lua").path
        try cli.file("c.lua", "return { profiles = { sandbox = { sandbox = true } } }\n")
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HUBSCRIPT_") }
        env["XDG_STATE_HOME"] = cli.root.appendingPathComponent("xdg").path
        let run = try CLIHarness.onATerminal([recipe, "--config", "c.lua", "--state-dir", "state", "--out", "out"]
                                                   + (extra.isEmpty ? [] : [extra]), in: cli.root, environment: env)
        XCTAssertEqual(run.status, 0)
        return run.screen
    }

    /// Every `\r…ESC[K` redraw removed: what stays on the screen.
    static func withoutRedraws(_ text: String) -> String {
        text.replacingOccurrences(of: "\r[^\r\n]*\u{1B}\\[K", with: "", options: .regularExpression)
    }

    func testOneLineForTheRecipeErasedWhenDone() throws {
        let screen = try accessReviewOnATerminal()
        XCTAssertTrue(screen.contains("\rreading organizations  0"), screen)
        XCTAssertTrue(screen.contains("\rmembers of org_acme  "), screen)
        // Nothing of the bars stays: the lines left are exactly the report's 7 and the
        // run's start line.
        let left = Self.withoutRedraws(screen)
        XCTAssertFalse(left.contains("reading"), left)
        XCTAssertNil(left.range(of: #"[0-9]/s(?![a-z])"#, options: .regularExpression), left)   // a rate of the bar
        XCTAssertEqual(left.components(separatedBy: "\n").count - 1, 8, left)
        XCTAssertTrue(left.hasPrefix("run run_"), left)
        // A list read under the recipe's bar does not redraw the line: a handful of
        // draws, not one per list (98 members).
        XCTAssertLessThan(screen.components(separatedBy: "\u{1B}[K").count, 40, screen)
    }

    func testNoProgressAndQuietDrawNothing() throws {
        for flag in ["--no-progress", "--quiet"] {
            let screen = try accessReviewOnATerminal(flag)
            XCTAssertFalse(screen.contains("\u{1B}[K"), flag + ": " + screen)
            XCTAssertFalse(screen.contains("reading"), flag + ": " + screen)
        }
    }
}

/// A rate-limit wait is never invisible: against a served sandbox with
/// the Hub's limits (100/min) and no client-side pacing, the 101st call waits for a
/// token and the run says so.
final class RateLimitNoticeCLITests: XCTestCase {
    func testTheHubsRateLimitWaitIsAnnounced() throws {
        let cli = try CLIHarness(testCase: self)
        let hubState = cli.root.appendingPathComponent("hub-state")
        try cli.resetSandbox(state: hubState)
        let server = try ServedSandbox(cli, state: hubState, faults: "none", rateLimits: "standard")
        defer { server.stop() }
        let recipe = try cli.file("many.lua", """
        recipe { name = "many", needs = { "users.list" }, params = { n = { type = "integer", default = 102 } } }
        for _ = 1, params.n do hub.users.get("usr_admin") end
        print("ok")
        """)
        let result = try cli.run(["run", recipe, "--config", server.config, "--no-progress"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "ok\n")
        let notices = result.stderr.split(separator: "\n").filter { $0.hasPrefix("rate limited by the Hub, waiting ") }
        XCTAssertFalse(notices.isEmpty, result.stderr)
        XCTAssertNotNil(notices.first?.range(of: #"^rate limited by the Hub, waiting [0-9.]+ s$"#, options: .regularExpression),
                        result.stderr)
        // The bucket is empty now: two more calls wait again, silently with --quiet.
        let quiet = try cli.run(["run", recipe, "--config", server.config, "--quiet", "--param", "n=2"])
        XCTAssertEqual(quiet.status, 0, quiet.stderr)
        XCTAssertFalse(quiet.stderr.contains("rate limited"), quiet.stderr)
    }

    /// Grants the application to the first `n` (21) active users, whether they hold it
    /// or not: the sandbox allows 20 grants a minute, so the 21st is answered 429 with
    /// Retry-After (up to 3 s) and waits.
    static let grants = """
        recipe { name = "grants", needs = { "users.list", "entitlements.manage" },
                 params = { n = { type = "integer", default = 21 } } }
        local ids = {}
        for u in hub.users.list { status = "active" } do
          ids[#ids + 1] = u.id
          if #ids == params.n then break end
        end
        for _, id in ipairs(ids) do pcall(hub.entitlements.grant, id, { application_id = "app_hub" }) end
        print("granted " .. #ids)
        """

    /// A served sandbox with the Hub's limits, and the recipe above.
    func servedGrants(_ cli: CLIHarness) throws -> (ServedSandbox, String) {
        let hubState = cli.root.appendingPathComponent("hub-state")
        try cli.resetSandbox(state: hubState)
        return (try ServedSandbox(cli, state: hubState, faults: "none", rateLimits: "standard"), try cli.file("grants.lua", Self.grants))
    }

    /// Without a terminal: one line per wait; under --json also one `rate_limited` event
    /// (before the write that waited), even with --quiet.
    func testA429WaitIsOneLineAndOneJSONEvent() throws {
        let cli = try CLIHarness(testCase: self)
        let (server, recipe) = try servedGrants(cli)
        defer { server.stop() }
        let r = try cli.run(["run", recipe, "--config", server.config, "--json", "--run-id", "run_paced"])
        XCTAssertEqual(r.status, 0, r.output)
        let notices = r.stderr.split(separator: "\n").filter { $0.contains("rate limited") }
        XCTAssertEqual(notices.count, 1, r.stderr)
        let n = try XCTUnwrap(notices.first.flatMap { $0.range(of: #"^rate limited by the Hub, waiting [1-3] s$"#, options: .regularExpression) }
            .map { _ in String(notices[0].dropFirst("rate limited by the Hub, waiting ".count).prefix(1)) }, r.stderr)
        let lines = JSONLines.withoutTimestamps(r.stdout)
        let waits = lines.enumerated().filter { $0.element.contains(#""type":"rate_limited""#) }
        XCTAssertEqual(waits.count, 1, r.stdout)
        let wait = try XCTUnwrap(waits.first)
        XCTAssertNotNil(wait.element.range(of: #"^\{"message":"rate limited by the Hub, waiting \#(n) s","reason":"hub","seconds":[0-9.]+,"type":"rate_limited"\}$"#,
                                           options: .regularExpression), wait.element)
        let event = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(wait.element.utf8)) as? [String: Any])
        let seconds = try XCTUnwrap(event["seconds"] as? Double)
        XCTAssertTrue(seconds > Double(n)! - 1 && seconds <= Double(n)!, "\(seconds) s shown as \(n) s")
        // 20 writes went before it, the 21st after.
        XCTAssertEqual(lines[..<wait.offset].filter { $0.contains(#""type":"write""#) }.count, 20)
        XCTAssertEqual(lines[wait.offset...].filter { $0.contains(#""type":"write""#) }.count, 1)

        // --json --quiet, the bucket still empty: the next grant waits; the event, no line.
        let quiet = try cli.run(["run", recipe, "--config", server.config, "--json", "--quiet", "--param", "n=1"])
        XCTAssertEqual(quiet.status, 0, quiet.output)
        XCTAssertEqual(quiet.stderr, "")
        XCTAssertEqual(JSONLines.withoutTimestamps(quiet.stdout).filter { $0.contains(#""type":"rate_limited""#) }.count, 1,
                       quiet.stdout)
    }

    /// On a terminal (script(1) gives the run one): a countdown in place, redrawn each
    /// second, erased when the wait is over; --verbose prints it as a line instead.
    func testA429WaitIsACountdownOnATerminal() throws {
        let cli = try CLIHarness(testCase: self)
        let (server, recipe) = try servedGrants(cli)
        defer { server.stop() }
        let run = try CLIHarness.onATerminal(["run", recipe, "--config", server.config, "--state-dir", cli.stateDir.path],
                                                   in: cli.root, environment: cli.environment)
        XCTAssertEqual(run.status, 0)
        let screen = run.screen
        let frames = try NSRegularExpression(pattern: "\r(rate limited by the Hub, waiting ([0-9]+) s)\u{1B}\\[K")
            .matches(in: screen, range: NSRange(screen.startIndex..., in: screen))
            .map { Int(screen[Range($0.range(at: 2), in: screen)!])! }
        // Whole seconds counted down to 1 (from 3, or less if the 429 came late).
        XCTAssertEqual(frames, Array((1...max(1, frames.first ?? 0)).reversed()), screen)
        XCTAssertTrue((2...3).contains(frames.first ?? 0), screen)
        let left = ProgressLineCLITests.withoutRedraws(screen)
        XCTAssertFalse(left.contains("rate limited"), "erased when the wait was over: \(left)")
        XCTAssertNotNil(left.range(of: #"^run (\S+) started; if it stops, resume it with: hubscript runs resume \1 --config \S+ --state-dir \S+\ngranted 21\ndone: run \1 — 1 reads, 21 writes in [0-9.]+ s\n$"#,
                                   options: .regularExpression), left)

        // --verbose, on a fresh sandbox (these grants are held now, and the bucket empty).
        server.stop()
        let (verboseServer, _) = try servedGrants(cli)
        defer { verboseServer.stop() }
        let verbose = try CLIHarness.onATerminal(["run", recipe, "--config", verboseServer.config, "--state-dir", cli.stateDir.path,
                                                        "--verbose"], in: cli.root, environment: cli.environment).screen
        let lines = try NSRegularExpression(pattern: "rate limited by the Hub, waiting [0-9] s\n")
        XCTAssertEqual(lines.numberOfMatches(in: verbose, range: NSRange(verbose.startIndex..., in: verbose)), 1, verbose)
        XCTAssertFalse(verbose.contains("\rrate limited"), "no countdown with --verbose: \(verbose)")
    }
}
