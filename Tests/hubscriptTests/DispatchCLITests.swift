import Foundation
import XCTest

/// `hubscript dispatch test`, `sandbox dispatch-log` and `dispatch.send` from the built
/// binary: the built-in sandbox's Dispatch (in process, kept in the state file) and a
/// served one (`sandbox serve --dispatch-port`), exact output and exit codes, and sends
/// that survive `kill -9` and resume exactly once.
final class DispatchCLITests: XCTestCase {
    /// Profiles read Dispatch's machine token from this variable (`dispatch_token_ref =
    /// "env:…"`): the CLI opens no vault yet.
    static let tokenVariable = "DISPATCH_TEST_TOKEN"
    static let sandboxToken = "dsp_test_machine_sandbox"

    override func setUp() {
        super.setUp()
        setenv(Self.tokenVariable, Self.sandboxToken, 1)   // children inherit it (CLIHarness.environment)
    }

    override func tearDown() {
        unsetenv(Self.tokenVariable)
        super.tearDown()
    }

    /// `hubscript sandbox dispatch-log --json` of `state`, one object per notification.
    func dispatchLog(_ cli: CLIHarness, state: URL? = nil) throws -> [[String: Any]] {
        let r = try cli.run(["sandbox", "dispatch-log", "--json"], state: state, expect: 0)
        return try r.stdout.split(separator: "\n").map {
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    /// A config with profiles pointing at `served`: `served` (token from the environment),
    /// `wrong` (a token the served Dispatch does not know), `vaulted` (token in the vault),
    /// `nodispatch`, and `down` (a Dispatch nobody listens on).
    func config(_ cli: CLIHarness, _ served: ServedSandbox, down: String = "http://127.0.0.1:9") throws -> String {
        let hub = "hub_url = \"\(served.url)\", api_key = \"satk_test_jobs_sandbox_0000000000000000\", api_key_id = \"key_jobs\", rate_limit_per_minute = 0"
        return try cli.file("dispatch.config.lua", """
            return { profiles = {
              served = { \(hub), dispatch_url = "\(served.dispatchURL)", dispatch_token_ref = "env:\(Self.tokenVariable)" },
              wrong = { \(hub), dispatch_url = "\(served.dispatchURL)", dispatch_token_ref = "env:DISPATCH_TEST_NO_SUCH_TOKEN" },
              vaulted = { \(hub), dispatch_url = "\(served.dispatchURL)", dispatch_token_ref = "dispatch/ci" },
              nodispatch = { \(hub) },
              down = { \(hub), dispatch_url = "\(down)", dispatch_token_ref = "env:\(Self.tokenVariable)" },
            } }
            """)
    }

    /// A sandbox served from its own state folder (reset first) with `faults`, and the
    /// profiles of `config(_:_:)` for it.
    func servedDispatch(faults: String) throws -> (CLIHarness, URL, ServedSandbox, String) {
        let cli = try CLIHarness(testCase: self)
        let hubState = cli.root.appendingPathComponent("hub-state")
        try cli.resetSandbox(state: hubState)
        let served = try ServedSandbox(cli, state: hubState, faults: faults)
        return (cli, hubState, served, try config(cli, served))
    }

    static let idLine = #"id: [0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}"#

    func assertMatches(_ text: String, _ pattern: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertNotNil(text.range(of: "^" + pattern + "$", options: .regularExpression), "\(text) !~ \(pattern)", file: file, line: line)
    }

    // MARK: The built-in sandbox

    func testDispatchTestOnTheBuiltInSandboxThenTheLogShowsIt() throws {
        let cli = try CLIHarness(testCase: self)
        let r = try cli.run(["dispatch", "test", "--title", "Hello ünïcode", "--body", "From the test."], expect: 0)
        assertMatches(r.stdout, #"Sent "Hello ünïcode" through the built-in sandbox Dispatch \(profile 'sandbox'\)\.\n"# + Self.idLine + #"\naccepted devices: 1\n"#)
        let file = cli.stateDir.appendingPathComponent("sandbox/hub.sqlite").path
        XCTAssertEqual(r.stderr, "hubscript: no configuration found; using the built-in sandbox Dispatch (\(file)). See docs/dispatch.md.\n")
        let id = String(r.stdout.split(separator: "\n")[1].dropFirst(4))

        let log = try cli.run(["sandbox", "dispatch-log"], expect: 0)
        assertMatches(log.stdout, "\(id)  sandbox-ci  hst-test-[0-9a-f-]{36}  Hello ünïcode  From the test\\.\n")
        XCTAssertEqual(log.stderr, "")
        let json = try dispatchLog(cli)
        XCTAssertEqual(json.count, 1)
        XCTAssertEqual(json[0]["id"] as? String, id)
        XCTAssertEqual(json[0]["machine"] as? String, "sandbox-ci")
        XCTAssertEqual(json[0]["accepted_devices"] as? Int, 1)
    }

    func testDispatchLogOfAnEmptySandbox() throws {
        let cli = try CLIHarness(testCase: self)
        let r = try cli.run(["sandbox", "dispatch-log"], expect: 0)
        XCTAssertEqual(r.stdout, "")
        XCTAssertEqual(r.stderr, "the sandbox Dispatch in \(cli.stateDir.path)/sandbox/hub.sqlite has received no notifications\n")
    }

    func testDispatchTestUsageErrors() throws {
        let cli = try CLIHarness(testCase: self)
        let empty = try cli.run(["dispatch", "test", "--title", ""], expect: 2)
        XCTAssertEqual(empty.stderr, "hubscript dispatch test: --title must be 1–100 characters (got 0)\nRun 'hubscript dispatch test --help' for usage.\n")
        XCTAssertEqual(empty.stdout, "")
        let long = try cli.run(["dispatch", "test", "--body", String(repeating: "é", count: 1001)], expect: 2)
        XCTAssertEqual(long.stderr, "hubscript dispatch test: --body must be 1–1000 characters (got 1001)\nRun 'hubscript dispatch test --help' for usage.\n")
        let unknown = try cli.run(["dispatch", "tset"], expect: 2)
        XCTAssertTrue(unknown.stderr.hasPrefix("hubscript dispatch: unknown subcommand 'tset' (did you mean 'test'?)"), unknown.stderr)
        XCTAssertEqual(try dispatchLog(cli).count, 0, "nothing was sent")
    }

    /// A recipe's sends on the built-in sandbox are writes (`--json` events with the
    /// Dispatch path) and stay in the state file after the process ends.
    func testARecipeSendsThroughTheBuiltInSandboxDispatch() throws {
        let cli = try CLIHarness(testCase: self)
        let recipe = try cli.file("alert.lua", """
            recipe { name = "alert", version = "1.0.0", needs = { "dispatch.send" } }
            local r = dispatch.send{ title = "Disk full", body = "/var is at 97%." }
            print(r.accepted_devices, r.replayed)
            """)
        let r = try cli.run([recipe, "--json"], expect: 0)
        let events = r.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let write = try XCTUnwrap(events.first { $0["type"] as? String == "write" })
        XCTAssertEqual(write["path"] as? String, "/dispatch/v1/notifications")
        XCTAssertEqual(write["summary"] as? String, "notify \"Disk full\"")
        XCTAssertEqual(events.first { $0["type"] as? String == "print" }?["text"] as? String, "1\tfalse")
        let log = try dispatchLog(cli)
        XCTAssertEqual(log.map { $0["key"] as? String }, [write["key"] as? String])
        XCTAssertEqual(log.map { $0["title"] as? String }, ["Disk full"])

        let undeclared = try cli.file("undeclared.lua", """
            recipe { name = "undeclared", version = "1.0.0" }
            dispatch.send{ title = "t", body = "b" }
            """)
        let refused = try cli.run([undeclared], expect: 1)
        XCTAssertTrue(refused.stderr.contains("permission_not_declared: dispatch.send needs 'dispatch.send', which this recipe's manifest does not declare; add \"dispatch.send\" to needs"), refused.stderr)
        XCTAssertEqual(try dispatchLog(cli).count, 1)
    }

    // MARK: A served Dispatch

    /// A configured target, end to end: `dispatch test --target` and a recipe's
    /// `dispatch.connect("ops")` reach the served Dispatch with the token the
    /// configuration binds to it, under a Hub profile.
    func testATargetReachesItsConfiguredDispatch() throws {
        let (cli, hubState, served, _) = try servedDispatch(faults: "none")
        defer { served.stop() }
        let config = try cli.file("targets.config.lua", """
            return {
              dispatch_targets = { ops = { url = "\(served.dispatchURL)", token_ref = "env:\(Self.tokenVariable)" } },
              profiles = { prod = { hub_url = "\(served.url)", api_key = "satk_test_jobs_sandbox_0000000000000000",
                                    rate_limit_per_minute = 0 } },
            }
            """)
        let ok = try cli.run(["dispatch", "test", "--config", config, "--target", "ops", "--title", "Target"], expect: 0)
        assertMatches(ok.stdout, #"Sent "Target" through "# + NSRegularExpression.escapedPattern(for: served.dispatchURL)
                      + #" \(target 'ops', profile 'prod'\)\.\n"# + Self.idLine + #"\naccepted devices: 1\n"#)
        let recipe = try cli.file("page.lua", """
            recipe { name = "page", needs = { "dispatch.send" }, targets = { "ops" } }
            local r = dispatch.connect("ops"):send{ title = "Paged", body = "through ops" }
            print(r.accepted_devices)
            """)
        let run = try cli.run([recipe, "--config", config], expect: 0)
        XCTAssertEqual(run.stdout, "1\n")
        XCTAssertEqual(try dispatchLog(cli, state: hubState).map { $0["title"] as? String }, ["Target", "Paged"])
        let missing = try cli.run(["dispatch", "test", "--config", config, "--target", "pager"], expect: 2)
        XCTAssertTrue(missing.stderr.contains("defines no Dispatch target 'pager' for profile 'prod' (targets: ops)"), missing.stderr)
    }

    func testDispatchTestAgainstAServedDispatch() throws {
        let (cli, hubState, served, config) = try servedDispatch(faults: "none")
        defer { served.stop() }

        let ok = try cli.run(["dispatch", "test", "--config", config, "--profile", "served", "--title", "Deploy"], expect: 0)
        assertMatches(ok.stdout, #"Sent "Deploy" through "# + NSRegularExpression.escapedPattern(for: served.dispatchURL)
                      + #" \(profile 'served'\)\.\n"# + Self.idLine + #"\naccepted devices: 1\n"#)
        XCTAssertEqual(ok.stderr, "")
        let log = try dispatchLog(cli, state: hubState)
        XCTAssertEqual(log.map { $0["title"] as? String }, ["Deploy"])
        XCTAssertEqual(log.map { $0["body"] as? String }, ["A test notification from hubscript (profile served)."])

        setenv("DISPATCH_TEST_NO_SUCH_TOKEN", "dsp_not_a_machine_token", 1)
        defer { unsetenv("DISPATCH_TEST_NO_SUCH_TOKEN") }
        let refused = try cli.run(["dispatch", "test", "--config", config, "--profile", "wrong"], expect: 2)
        XCTAssertEqual(refused.stdout, "")
        XCTAssertEqual(refused.stderr, """
            hubscript dispatch test: unauthorized: the Dispatch token was refused: \(served.dispatchURL) does not accept the machine \
            token from $DISPATCH_TEST_NO_SUCH_TOKEN (HTTP 401). Check the token (is it this server's, and not revoked?) and the Dispatch URL.

            """)
        XCTAssertFalse(refused.output.contains("dsp_not_a_machine_token"))

        let vaulted = try cli.run(["dispatch", "test", "--config", config, "--profile", "vaulted"], expect: 2)
        XCTAssertEqual(vaulted.stderr, """
            hubscript dispatch test: vault_not_open: profile 'vaulted' keeps its Dispatch token in the vault entry 'dispatch/ci' \
            (dispatch_token_ref): no vault in \(cli.stateDir.path)/vault: create one with `hubscript vault init`, then `hubscript vault set NAME`

            """)
        let none = try cli.run(["dispatch", "test", "--config", config, "--profile", "nodispatch"], expect: 2)
        XCTAssertEqual(none.stderr, """
            hubscript dispatch test: dispatch_not_configured: profile 'nodispatch' has no Dispatch: set dispatch_url and \
            dispatch_token_ref in its configuration, or send through a configured target: dispatch.connect("NAME") with \
            dispatch_targets in the configuration

            """)
        let down = try cli.run(["dispatch", "test", "--config", config, "--profile", "down"], expect: 1)
        XCTAssertEqual(down.stderr, """
            hubscript dispatch test: transport_error: no answer from Dispatch at http://127.0.0.1:9 after 4 attempts: \
            \(try transportMessage(down.stderr)). Check the network and the Dispatch URL.

            """)
        XCTAssertEqual(try dispatchLog(cli, state: hubState).count, 1, "only the first test reached the served Dispatch")
    }

    /// What the transport said about a refused connection (its wording is the OS's).
    func transportMessage(_ stderr: String) throws -> String {
        let start = try XCTUnwrap(stderr.range(of: "after 4 attempts: ")).upperBound
        let end = try XCTUnwrap(stderr.range(of: ". Check the network")).lowerBound
        return String(stderr[start..<end])
    }

    // MARK: kill -9 and resume

    static let count = 50
    static let fifty = """
        recipe {
          name = "alert-many",
          version = "1.0.0",
          description = "Test fixture: send N notifications.",
          params = { count = { type = "integer", default = \(count) } },
          needs  = { "dispatch.send" },
          limits = { writes = 1000 },
        }
        for i = 1, params.count do
          dispatch.send{ title = "Alert " .. i, body = "Security event number " .. i .. "." }
        end
        print(("sent %d alerts"):format(params.count))
        """

    /// The journalled write keys of run `id`, in order.
    func journalKeys(_ cli: CLIHarness, _ id: String) throws -> [String] {
        let r = try cli.run(["runs", "show", id], expect: 0)
        guard let start = r.stdout.range(of: "\nWRITES") else { return [] }
        return r.stdout[start.upperBound...].split(separator: "\n").dropFirst(2)
            .compactMap { $0.split(separator: " ").last.map(String.init) }
    }

    func killOnPending(_ cli: CLIHarness, _ args: [String], runID id: String, atDone threshold: Int, hubState: URL) throws -> KillTrial {
        let states = try cli.killOnPending(args, runID: id, atDone: threshold, within: 60)
        return KillTrial(states: states, received: try dispatchLog(cli, state: hubState).count, server: "Dispatch")
    }

    /// 50 sends against a served Dispatch that fails, loses answers and is slow, killed
    /// three times on a pending send and resumed: the Dispatch accepted each exactly once.
    func testKilledMidwayAndResumedSendsEachNotificationOnce() throws {
        let (cli, hubState, served, config) = try servedDispatch(faults: "latency=100ms,error=0.1,lost=0.1,retry_after=0,seed=3")
        defer { served.stop() }
        let recipe = try cli.file("alert-many.lua", Self.fifty)
        let id = "run_kill_dispatch"
        let extra = ["--config", config, "--profile", "served"]
        var trials: [KillTrial] = []
        trials.append(try killOnPending(cli, [recipe, "--run-id", id] + extra, runID: id, atDone: 5, hubState: hubState))
        for threshold in [20, 35] {
            trials.append(try killOnPending(cli, ["runs", "resume", id] + extra, runID: id, atDone: threshold, hubState: hubState))
        }
        KillTrial.assertMeaningful(trials)

        let final = try cli.run(["runs", "resume", id] + extra, expect: 0)
        XCTAssertTrue(final.stdout.contains("sent \(Self.count) alerts"), final.output)
        XCTAssertEqual(try cli.writeStates(id), ["done": Self.count], "journal write states after the final resume")

        let keys = try journalKeys(cli, id)
        XCTAssertEqual(Set(keys).count, Self.count)
        let log = try dispatchLog(cli, state: hubState)
        var perKey: [String: Int] = [:]
        for entry in log { perKey[entry["key"] as? String ?? "(none)", default: 0] += 1 }
        XCTAssertEqual(perKey, Dictionary(uniqueKeysWithValues: keys.map { ($0, 1) }), "sends per key (trials: \(trials))")
        XCTAssertEqual(Set(log.compactMap { $0["title"] as? String }), Set((1...Self.count).map { "Alert \($0)" }))
    }
}

/// `hubscript check` knows `dispatch.send` (a permission the Hub does not grant).
final class DispatchCheckCLITests: XCTestCase {
    private var cli: CLIHarness!

    override func setUpWithError() throws {
        try super.setUpWithError()
        cli = try CLIHarness(testCase: self)
    }

    override func tearDown() {
        cli = nil
        super.tearDown()
    }

    func testCheckAcceptsDispatchSendAndSuggestsItForATypo() throws {
        try cli.file("alert.lua", """
            recipe { name = "alert", version = "1.0.0", needs = { "dispatch.send" } }
            dispatch.send{ title = "t", body = "b" }
            """)
        assertResult(try cli.hubscript("check", "alert.lua"), stdout: "ok   alert.lua\n", stderr: "", exitCode: 0)
        try cli.file("typo.lua", """
            recipe { name = "typo", version = "1.0.0", needs = { "dispatch.sned" } }
            """)
        let typo = try cli.hubscript("check", "typo.lua")
        XCTAssertEqual(typo.status, 2)
        XCTAssertTrue(typo.stdout.contains("typo.lua:1: manifest: needs: unknown permission 'dispatch.sned' (did you mean 'dispatch.send'?)"), typo.stdout)
    }
}
