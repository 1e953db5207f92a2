import Foundation
import XCTest

/// A Hub that refuses the profile's credential or cannot be reached reads as what it
/// is — the profile named, what to do, no recipe traceback into the paging helper — for
/// `run`, `plan`, `whoami` and `doctor`, with exit code 3 (credential) or 7 (the way to
/// the Hub). A recipe's own error that only looks like one stays the recipe's.
final class HubReachCLITests: XCTestCase {
    static let adaKey = "satk_test_ada_sandbox_000000000000000000"
    static let listing = """
        recipe { name = "count", needs = { "users.list" } }
        local n = 0
        for _ in hub.users.list{} do n = n + 1 end
        print(n)
        """

    func stable(_ text: String) -> String {
        text.replacingOccurrences(of: #"run_[0-9TZ]+_[0-9a-f]+"#, with: "RUN", options: .regularExpression)
            .replacingOccurrences(of: #" in [0-9.]+ s\n"#, with: " in T s\n", options: .regularExpression)
            .replacingOccurrences(of: #"resume RUN --config \S+ --state-dir \S+"#, with: "resume RUN --config CONFIG --state-dir STATE",
                                  options: .regularExpression)
    }

    /// Ada's key, revoked on a served sandbox by the jobs key (unless `revoked` is false:
    /// then `revokeAdaKey` revokes it).
    func revokedAdaKey(revoked: Bool = true) throws -> (CLIHarness, ServedSandbox, String) {
        let cli = try CLIHarness(testCase: self)
        let hubState = cli.root.appendingPathComponent("hub-state")
        try cli.resetSandbox(state: hubState)
        let served = try ServedSandbox(cli, state: hubState, faults: "none")
        try cli.file("revoke.lua", """
            recipe { name = "revoke", needs = { "api_keys.manage" } }
            hub.api_keys.revoke("key_ada_cli")
            """)
        if revoked { try revokeAdaKey(cli, served) }
        let config = try cli.file("ada.config.lua", """
            return { profiles = { ada = { hub_url = "\(served.url)", api_key_env = "ADA_KEY",
                                          api_key_permissions = { "users.list" }, rate_limit_per_minute = 0 } } }
            """)
        cli.extraEnvironment = ["ADA_KEY": Self.adaKey]
        try cli.file("count.lua", Self.listing)
        return (cli, served, config)
    }

    func revokeAdaKey(_ cli: CLIHarness, _ served: ServedSandbox) throws {
        _ = try cli.run(["run", "revoke.lua", "--config", served.config, "--profile", "served", "--quiet"], expect: 0)
    }

    func rejected(_ url: String) -> String {
        "profile 'ada': the API key is unknown, revoked or expired (401 from \(url): The API key is unknown or revoked.); "
            + "make a new key and put it in $ADA_KEY (better: hubscript vault set hub/ada, then api_key_ref = \"hub/ada\")"
    }

    func testARevokedKeyReadsAsTheProfilesCredentialInRunPlanWhoamiAndDoctor() throws {
        let (cli, served, config) = try revokedAdaKey()
        defer { served.stop() }
        let run = try cli.run(["run", "count.lua", "--config", config])
        XCTAssertEqual(run.stdout, "")
        XCTAssertEqual(stable(run.stderr), """
            run RUN started; if it stops, resume it with: hubscript runs resume RUN --config CONFIG --state-dir STATE
            error: \(rejected(served.url))
            stopped: run RUN — 1 reads, 0 writes in T s

            """)
        XCTAssertEqual(run.status, 3)
        // The journal keeps the same words and exit code for the console and runs show.
        let id = try XCTUnwrap(run.stderr.range(of: #"run_[0-9TZ]+_[0-9a-f]+"#, options: .regularExpression).map { String(run.stderr[$0]) })
        let kept = try cli.run(["runs", "show", id, "--output", "--config", config], expect: 0)
        XCTAssertTrue(kept.stdout.contains("  error: \(rejected(served.url))\n"), kept.stdout)
        XCTAssertTrue(kept.stdout.contains("  failed (exit 3): run \(id) — 1 reads, 0 writes in "), kept.stdout)

        let plan = try cli.run(["plan", "count.lua", "--config", config])
        XCTAssertEqual(stable(plan.stderr), """
            plan RUN started
            error: \(rejected(served.url))
            stopped: run RUN — 1 reads, 0 writes in T s

            """)
        XCTAssertEqual(plan.status, 3)

        // --json: an error event with the stable code, and the summary's exit code.
        let json = try cli.run(["run", "count.lua", "--config", config, "--json"])
        XCTAssertEqual(json.status, 3)
        let events = json.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let error = try XCTUnwrap(events.first { $0["type"] as? String == "error" })
        XCTAssertEqual(error["kind"] as? String, "host")
        XCTAssertNil(error["traceback"])
        let fields = try XCTUnwrap(error["error"] as? [String: Any])
        XCTAssertEqual(fields["code"] as? String, "api_key_rejected")
        XCTAssertEqual(fields["profile"] as? String, "ada")
        XCTAssertEqual(fields["credential"] as? String, "environment")
        XCTAssertEqual(fields["hub_url"] as? String, served.url)
        XCTAssertEqual(events.last?["exit_code"] as? Int, 3)
        XCTAssertFalse(json.stdout.contains(Self.adaKey))

        let whoami = try cli.run(["whoami", "--config", config])
        XCTAssertEqual(whoami.stdout, "")
        XCTAssertEqual(whoami.stderr, "hubscript whoami: \(rejected(served.url))\n")
        XCTAssertEqual(whoami.status, 3)

        let doctor = try cli.run(["doctor", "--config", config])
        XCTAssertTrue(doctor.stdout.contains("FAIL  hub 'ada': " + rejected(served.url).dropFirst("profile 'ada': ".count) + "\n"),
                      doctor.stdout)
        XCTAssertEqual(doctor.stderr, "doctor: 1 of 5 checks failed\n")
        XCTAssertEqual(doctor.status, 1)
    }

    func testAJobOnARevokedKeyFailsWithTheProfilesLine() throws {
        let (cli, served, _) = try revokedAdaKey()
        defer { served.stop() }
        let config = try cli.file("jobs.config.lua", """
            return { profiles = { ada = { hub_url = "\(served.url)", api_key_env = "ADA_KEY",
                                          api_key_permissions = { "users.list" }, rate_limit_per_minute = 0 } },
                     jobs = { count = { recipe = "count.lua", schedule = "0 3 * * *" } } }
            """)
        let fired = try cli.run(["jobs", "run", "count", "--config", config])
        XCTAssertTrue(fired.stdout.contains(" failed (exit 3) in "), fired.output)
        XCTAssertTrue(fired.output.contains(": \(rejected(served.url))"), fired.output)
        XCTAssertFalse(fired.output.contains("traceback"), fired.output)
        XCTAssertEqual(fired.status, 3)
    }

    func testAnApplyWhoseKeyWasRevokedSinceThePlanSaysSoNotThatTheRecipeFailed() throws {
        let (cli, served, config) = try revokedAdaKey(revoked: false)
        defer { served.stop() }
        let plan = cli.root.appendingPathComponent("count.plan.json").path
        _ = try cli.run(["plan", "count.lua", "--config", config, "--out", plan, "--quiet"], expect: 0)
        try revokeAdaKey(cli, served)
        let apply = try cli.run(["apply", plan, "--config", config])
        XCTAssertEqual(apply.stderrWithoutRunStart, "error: \(rejected(served.url))\n")
        XCTAssertEqual(apply.status, 3)
    }

    func testASessionProfileNotSignedInSaysToSignIn() throws {
        let cli = try CLIHarness(testCase: self)
        let config = try cli.file("me.config.lua", """
            return { profiles = { me = { hub_url = "http://127.0.0.1:9", email = "ada@example.com" } } }
            """)
        try cli.file("count.lua", Self.listing)
        let r = try cli.run(["run", "count.lua", "--config", config])
        XCTAssertTrue(r.stderr.contains("error: profile 'me': its login session has ended or was never started (http://127.0.0.1:9: "
                                        + "The session of profile me ended: no stored session); sign in again: hubscript login --profile me\n"),
                      r.stderr)
        XCTAssertFalse(r.stderr.contains("traceback"), r.stderr)
        XCTAssertEqual(r.status, 3)
    }

    func testAKeyRevokedMidRunSaysHowToResumeTheWritesMade() throws {
        let cli = try CLIHarness(testCase: self)
        let hubState = cli.root.appendingPathComponent("hub-state")
        try cli.resetSandbox(state: hubState)
        let served = try ServedSandbox(cli, state: hubState, faults: "none")
        defer { served.stop() }
        // The jobs key revokes itself, then reads: the write is made, the read refused.
        try cli.file("self.lua", """
            recipe { name = "self", needs = { "api_keys.manage", "users.list" } }
            hub.api_keys.revoke("key_jobs")
            for _ in hub.users.list{} do end
            """)
        let r = try cli.run(["run", "self.lua", "--config", served.config, "--profile", "served"])
        let url = served.url
        XCTAssertEqual(stable(r.stderr), """
            run RUN started; if it stops, resume it with: hubscript runs resume RUN --config CONFIG --state-dir STATE
            error: profile 'served': the API key is unknown, revoked or expired (401 from \(url): The API key is unknown or revoked.); \
            make a new key and store it: hubscript vault set hub/served, then replace api_key with api_key_ref = "hub/served" in \(served.config)
            The writes made before it are journalled and will not be repeated; once fixed, finish the run with: hubscript runs resume RUN --config CONFIG --state-dir STATE
            stopped: run RUN — 1 reads, 1 writes in T s

            """)
        XCTAssertEqual(r.status, 3)
    }

    func testAClosedPortReadsAsNothingAcceptingConnections() throws {
        let cli = try CLIHarness(testCase: self)
        let port = try TinyProxy.freePort()
        let config = try cli.file("closed.config.lua", """
            return { profiles = { closed = { hub_url = "http://127.0.0.1:\(port)", api_key_env = "HUB_KEY",
                                             api_key_permissions = { "users.list" }, rate_limit_per_minute = 0 } } }
            """)
        cli.extraEnvironment = ["HUB_KEY": Self.adaKey, "http_proxy": "", "all_proxy": "", "ALL_PROXY": ""]
        try cli.file("count.lua", Self.listing)
        let what = "profile 'closed': nothing accepts connections at http://127.0.0.1:\(port) (cannot connect to port \(port): "
            + "Connection refused (errno 111)); check that the Hub (or hubscript sandbox serve) is running there, "
            + "and the port of hub_url in profile 'closed'"
        let run = try cli.run(["run", "count.lua", "--config", config])
        XCTAssertEqual(stable(run.stderr), """
            run RUN started; if it stops, resume it with: hubscript runs resume RUN --config CONFIG --state-dir STATE
            error: \(what)
            stopped: run RUN — 1 reads, 0 writes in T s

            """)
        XCTAssertEqual(run.status, 7)

        let whoami = try cli.run(["whoami", "--config", config, "--json"])
        XCTAssertEqual(whoami.stderr, "hubscript whoami: \(what)\n")
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(whoami.stdout.utf8)) as? [String: Any])
        XCTAssertEqual((object["error"] as? [String: Any])?["code"] as? String, "hub_connection_refused")
        XCTAssertEqual(object["exit_code"] as? Int, 7)
        XCTAssertEqual(whoami.status, 7)
    }

    func testAHostNameThatDoesNotResolveSaysSo() throws {
        let cli = try CLIHarness(testCase: self)
        let config = try cli.file("dns.config.lua", """
            return { profiles = { far = { hub_url = "https://hub.invalid", api_key_env = "HUB_KEY",
                                          api_key_permissions = { "users.list" }, rate_limit_per_minute = 0 } } }
            """)
        cli.extraEnvironment = ["HUB_KEY": Self.adaKey, "https_proxy": "", "HTTPS_PROXY": "", "all_proxy": "", "ALL_PROXY": ""]
        try cli.file("count.lua", Self.listing)
        let run = try cli.run(["run", "count.lua", "--config", config, "--quiet"])
        XCTAssertTrue(run.stderr.hasPrefix("error: profile 'far': the Hub's host name does not resolve (https://hub.invalid: "
                                           + "cannot resolve hub.invalid: "), run.stderr)
        XCTAssertTrue(run.stderr.contains("); check hub_url in profile 'far' and this machine's DNS\n"), run.stderr)
        XCTAssertFalse(run.stderr.contains("traceback"), run.stderr)
        XCTAssertEqual(run.status, 7)
    }

    func testARecipesOwnErrorThatLooksLikeOneStaysTheRecipes() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.file("fake.lua", """
            recipe { name = "fake", needs = { "users.list" } }
            error({ code = "unauthenticated", status = 401, message = "made up" })
            """)
        let r = try cli.run(["run", "fake.lua", "--quiet"])
        XCTAssertTrue(r.stderr.hasPrefix("error: fake.lua:2: unauthenticated: made up\nstack traceback:\n"), r.stderr)
        XCTAssertEqual(r.status, 1)
        // Nor does a transport_error of its own (the client reached nothing: it sent nothing).
        try cli.file("caught.lua", """
            recipe { name = "caught", needs = { "users.list" } }
            error({ code = "transport_error", message = "made up too" })
            """)
        let caught = try cli.run(["run", "caught.lua", "--quiet"])
        XCTAssertTrue(caught.stderr.hasPrefix("error: caught.lua:2: transport_error: made up too\nstack traceback:\n"), caught.stderr)
        XCTAssertEqual(caught.status, 1)
    }

    func testAFailureTheRecipeCatchesIsItsOwnBusiness() throws {
        let (cli, served, config) = try revokedAdaKey()
        defer { served.stop() }
        try cli.file("careful.lua", """
            recipe { name = "careful", needs = { "users.list" } }
            local ok, err = pcall(hub.users.get, "usr_ada")
            print(ok, err.code, err.status)
            """)
        let r = try cli.run(["run", "careful.lua", "--config", config, "--quiet"])
        XCTAssertEqual(r.stdout, "false\tunauthenticated\t401\n", r.stderr)
        XCTAssertEqual(r.status, 0)
    }
}
