import Foundation
import XCTest

/// `hubscript listen --setup`, `--bind`, webhook deliveries from the built-in (embedded)
/// sandbox Hub, and `jobs serve --listen` (docs/webhooks.md): a newcomer's path to
/// triggers without `sandbox serve`.
final class ListenSetupCLITests: XCTestCase {
    typealias Child = ListenCLITests.Child

    var vault: VaultCLI!
    var cli: CLIHarness { vault.harness }
    var config: String!

    /// A vault (key file in the environment), the embedded sandbox, the trigger
    /// `offboard` (user.suspended → on-suspend.lua) on profile `dev`.
    override func setUpWithError() throws {
        vault = try VaultCLI(testCase: self)
        try vault.initialise()
        cli.extraEnvironment = ["HUBSCRIPT_VAULT_KEY_FILE": vault.keyFile]
        try cli.resetSandbox(users: 20)
        try cli.file("on-suspend.lua", ListenCLITests.recipe(pauseMs: 0))
        try cli.file("suspend-some.lua", ListenCLITests.suspendRecipe)
        try writeConfig(jobs: "")
    }

    func writeConfig(jobs: String) throws {
        config = try cli.file("hubscript.config.lua", """
            return {
              profiles = { dev = { sandbox = true } },
              triggers = { offboard = { on = { "user.suspended" }, recipe = "on-suspend.lua", profile = "dev", secret = "webhooks/hub" } },
              jobs = { \(jobs) },
            }
            """)
    }

    /// A free loopback port (bound, read, released).
    func freePort() throws -> Int {
        let server = try HTTPServerProbe()
        return server.port
    }

    /// The fixture's "Suspended …" notifications per user, from the embedded sandbox.
    func notified() throws -> [String: Int] { try ListenCLITests.notified(in: cli.sandbox()) }

    func waitUntil(_ timeout: Double = 30, _ condition: () throws -> Bool) rethrows -> Bool {
        try ListenCLITests.waitUntil(timeout, condition)
    }

    func setup(port: Int, extra: [String] = []) throws -> CLIHarness.Result {
        try cli.run(["listen", "--setup", "--port", String(port), "--config", config] + extra)
    }

    func testSetupRegistersTheWebhookAndStoresItsSecretThenChangesNothing() throws {
        let port = try freePort()
        let first = try setup(port: port)
        XCTAssertEqual(first.status, 0, first.output)
        let line = #"^created webhook (whk_[a-z0-9]+) for offboard: user\.suspended → http://127\.0\.0\.1:\#(port)/hooks; its signing secret is in the vault as webhooks/hub\n$"#
        XCTAssertNotNil(first.stdout.range(of: line, options: .regularExpression), first.stdout)
        XCTAssertEqual(first.stderr, "")
        let id = String(first.stdout.split(separator: " ")[2])
        let again = try setup(port: port)
        XCTAssertEqual(again.status, 0, again.output)
        XCTAssertEqual(again.stdout, "webhook \(id) for offboard already delivers user.suspended to http://127.0.0.1:\(port)/hooks; its secret is in the vault as webhooks/hub: nothing to do\n")
        // The secret is in the vault, and in no output.
        let list = try vault.run(["list", "--key-file", vault.keyFile])
        XCTAssertTrue(list.stdout.contains("webhooks/hub"), list.stdout)
        XCTAssertFalse((first.output + again.output).contains("whsec_"))
        // A vault that lost the entry gets a rotated secret, the webhook is kept.
        XCTAssertEqual(try vault.run(["rm", "webhooks/hub", "--key-file", vault.keyFile]).status, 0)
        let repaired = try setup(port: port)
        XCTAssertEqual(repaired.stdout, "webhook \(id) for offboard → http://127.0.0.1:\(port)/hooks: secret rotated into the vault as webhooks/hub\n",
                       repaired.output)
        XCTAssertEqual(try cli.sandbox().all("/webhooks", "").count, 1)
    }

    func testSetupWithoutAVaultKeyIsAUsageError() throws {
        cli.extraEnvironment = [:]
        let r = try setup(port: 8490)
        XCTAssertEqual(r.status, 2, r.output)
        XCTAssertEqual(r.stderr, "hubscript listen: no vault key: pass --key-file PATH or --passphrase, or set HUBSCRIPT_VAULT_KEY or HUBSCRIPT_VAULT_KEY_FILE\nRun 'hubscript listen --help' for usage.\n")
        XCTAssertEqual(try cli.sandbox().all("/webhooks", "").count, 0, "nothing registered without a place for its secret")
    }

    func testTheEmbeddedSandboxDeliversARunsChangesToTheListener() throws {
        let port = try freePort()
        XCTAssertEqual(try setup(port: port).status, 0)
        let listener = try Child(cli, ["listen", "--port", String(port), "--config", config])
        defer { listener.stop() }
        _ = try listener.wait(for: "listening on (http://127\\.0\\.0\\.1:[0-9]+)")
        let run = try cli.run(["suspend-some.lua", "--profile", "dev", "--config", config])
        XCTAssertEqual(run.status, 0, run.output)
        XCTAssertFalse(run.stderr.contains("still pending"), run.stderr)
        let users = run.stdout.split(separator: "\n").map(String.init).filter { $0.hasPrefix("usr_") }
        XCTAssertEqual(users.count, 3, run.output)
        XCTAssertTrue(try waitUntil { try notified().values.reduce(0, +) >= 9 }, listener.output)
        XCTAssertTrue(waitUntil { listener.output.components(separatedBy: " succeeded in ").count - 1 == 3 }, listener.output)
        XCTAssertEqual(try notified(), Dictionary(uniqueKeysWithValues: users.map { ($0, 3) }), listener.output)
    }

    func testADeliveryNobodyReceivedIsNotedAndSentByTheNextRun() throws {
        let port = try freePort()
        XCTAssertEqual(try setup(port: port).status, 0)
        try cli.file("one.lua", ListenCLITests.suspendRecipe.replacingOccurrences(of: "default = 3", with: "default = 1"))
        let run = try cli.run(["one.lua", "--profile", "dev", "--config", config])
        XCTAssertEqual(run.status, 0, run.output)
        XCTAssertTrue(run.stderr.hasSuffix("note: 1 webhook delivery is still pending in the built-in sandbox (its receiver did not answer yet); "
                                           + "the next run on this state folder, or hubscript sandbox serve, retries them\n"), run.stderr)
        XCTAssertEqual(try notified(), [:])
        // The listener comes up; the next run that opens the sandbox sends the backlog.
        let listener = try Child(cli, ["listen", "--port", String(port), "--config", config])
        defer { listener.stop() }
        _ = try listener.wait(for: "listening on")
        try cli.file("read.lua", """
            recipe { name = "read", version = "1.0.0", description = "Test fixture: one read.", needs = { "users.list" } }
            for u in hub.users.list { status = "suspended" } do print(u.id) break end
            """)
        Thread.sleep(forTimeInterval: 0.3)   // past the failed attempt's first retry time
        let next = try cli.run(["read.lua", "--profile", "dev", "--config", config])
        XCTAssertEqual(next.status, 0, next.output)
        XCTAssertFalse(next.stderr.contains("still pending"), next.stderr)
        let user = run.stdout.split(separator: "\n").first { $0.hasPrefix("usr_") }.map(String.init)
        XCTAssertTrue(try waitUntil { try notified()[user ?? "?"] == 3 }, listener.output)
    }

    /// A recipe may register a webhook to any loopback port; a receiver that accepts the
    /// connection and never answers must not hold a run's exit up.
    func testAReceiverThatNeverAnswersDelaysTheExitByAtMostTheBound() throws {
        let silent = try SilentListener()
        defer { silent.close() }
        XCTAssertEqual(try setup(port: silent.port).status, 0)
        let started = Date()
        let run = try cli.run(["suspend-some.lua", "--profile", "dev", "--config", config])
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertEqual(run.status, 0, run.output)
        XCTAssertTrue(run.stderr.contains("webhook deliveries are still pending in the built-in sandbox"), run.stderr)
        XCTAssertLessThan(elapsed, 8, "3 deliveries to a receiver that never answers held the exit up \(elapsed) s")
    }

    func testBindListensOnTheNamedAddress() throws {
        let port = try freePort()
        XCTAssertEqual(try setup(port: port, extra: ["--url", "http://127.0.0.2:\(port)/hooks"]).status, 0)
        let listener = try Child(cli, ["listen", "--port", String(port), "--bind", "127.0.0.2", "--config", config])
        defer { listener.stop() }
        _ = try listener.wait(for: "listening on http://127\\.0\\.0\\.2:\(port) for offboard \\(user\\.suspended\\)\n")
        try cli.file("one.lua", ListenCLITests.suspendRecipe.replacingOccurrences(of: "default = 3", with: "default = 1"))
        let run = try cli.run(["one.lua", "--profile", "dev", "--config", config])
        XCTAssertEqual(run.status, 0, run.output)
        XCTAssertTrue(try waitUntil { try notified().values.reduce(0, +) == 3 }, listener.output)
        XCTAssertFalse(listener.output.contains("reachable beyond this host"), "127.0.0.2 is loopback: \(listener.output)")
    }

    func testBindTakesAnAddressNotAName() throws {
        let r = try cli.run(["listen", "--bind", "hooks.example.com", "--config", config])
        XCTAssertEqual(r.status, 2, r.output)
        XCTAssertEqual(r.stderr, "hubscript listen: --bind takes an IP address (127.0.0.1, 0.0.0.0, :: or one of this host's), got 'hooks.example.com'\nRun 'hubscript listen --help' for usage.\n")
        let serve = try cli.run(["jobs", "serve", "--bind", "0.0.0.0", "--config", config])
        XCTAssertEqual(serve.status, 2, serve.output)
        XCTAssertEqual(serve.stderr, "hubscript jobs serve: --bind needs --listen PORT (the webhook receiver's port)\nRun 'hubscript jobs serve --help' for usage.\n")
        let url = try cli.run(["listen", "--url", "http://127.0.0.1:1/hooks", "--config", config])
        XCTAssertEqual(url.status, 2, url.output)
        XCTAssertEqual(url.stderr, "hubscript listen: --url goes with --setup\nRun 'hubscript listen --help' for usage.\n")
    }

    /// One process: the scheduler fires a job whose recipe suspends a user, the embedded
    /// sandbox delivers the event to the same process's listener, the trigger runs.
    func testJobsServeWithListenFiresJobsAndRunsTheirTriggers() throws {
        try writeConfig(jobs: #"suspend = { recipe = "suspend-some.lua", params = { count = 2 }, schedule = "* * * * *", profile = "dev" }"#)
        let port = try freePort()
        XCTAssertEqual(try setup(port: port).status, 0)
        let serve = try Child(cli, ["jobs", "serve", "--now", "2026-01-01T10:00:00Z", "--listen", String(port), "--config", config])
        _ = try serve.wait(for: "jobs serve: listening on http://127\\.0\\.0\\.1:\(port) for offboard")
        XCTAssertTrue(try waitUntil(60) { try notified().values.reduce(0, +) >= 6 }, serve.output)
        XCTAssertTrue(waitUntil { serve.output.components(separatedBy: "offboard@wev_").count - 1 >= 4 }, serve.output)
        serve.stop(SIGTERM)
        XCTAssertEqual(serve.process.terminationStatus, 0, serve.output)
        XCTAssertTrue(serve.output.contains("suspend@2026-01-01T10:00:00Z succeeded in "), serve.output)
        XCTAssertEqual(Set(try notified().values), [3], "each suspended user told three times, once per event: \(serve.output)")
        XCTAssertTrue(serve.output.hasSuffix("jobs serve: stopped\n"), serve.output)
    }
}

extension ListenSetupCLITests {
    /// recipes/forward-alerts.lua as a trigger (push) and as a poll afterwards: each
    /// suspension reaches Dispatch once, whichever way it was read.
    func testForwardAlertsAsATriggerThenAPollSendsEachAlertOnce() throws {
        let recipe = CLIHarness.repoRoot.appendingPathComponent("recipes/forward-alerts.lua").path
        config = try cli.file("hubscript.config.lua", """
            return {
              profiles = { dev = { sandbox = true } },
              triggers = { alerts = { on = { "user.*" }, recipe = "\(recipe)", profile = "dev", secret = "webhooks/hub" } },
            }
            """)
        let port = try freePort()
        let setup = try setup(port: port)
        XCTAssertTrue(setup.stdout.contains("for alerts: * → http://127.0.0.1:\(port)/hooks"), setup.output)
        let listener = try Child(cli, ["listen", "--port", String(port), "--config", config])
        defer { listener.stop() }
        _ = try listener.wait(for: "listening on")
        let since = ISO8601DateFormatter().string(from: Date().addingTimeInterval(-2))
        let run = try cli.run(["suspend-some.lua", "--profile", "dev", "--config", config])
        XCTAssertEqual(run.status, 0, run.output)
        XCTAssertTrue(waitUntil(60) { listener.output.components(separatedBy: " succeeded in ").count - 1 >= 3 }, listener.output)
        XCTAssertEqual(listener.output.components(separatedBy: "forwarded event wev_").count - 1, 3, listener.output)
        func sends() throws -> [String] {
            let r = try cli.run(["sandbox", "dispatch-log", "--json"], expect: 0)
            return try r.stdout.split(separator: "\n").compactMap {
                let entry = try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
                return entry["title"] as? String == "Hub: user.suspended" ? entry["key"] as? String : nil
            }
        }
        let pushed = try sends()
        XCTAssertEqual(pushed.count, 3, listener.output)
        XCTAssertTrue(pushed.allSatisfy { $0.hasPrefix("alert-evt_") }, "\(pushed)")
        // Polling the same span finds the three, already sent: Dispatch replays them.
        let poll = try cli.run([recipe, "--profile", "dev", "--config", config, "--param", "since=\(since)",
                                "--param", "actions=user.suspended", "--param", "inbox="])
        XCTAssertEqual(poll.status, 0, poll.output)
        XCTAssertTrue(poll.stdout.contains("forwarded 3 alerts (3 already sent before)"), poll.output)
        XCTAssertEqual(Set(try sends()), Set(pushed))
        XCTAssertEqual(try sends().count, 3)
    }
}

/// A loopback port that takes connections (the kernel's backlog) and never answers.
final class SilentListener {
    let fd: Int32
    let port: Int
    init() throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let fd = self.fd
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 64) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ok else { throw NSError(domain: "SilentListener", code: Int(errno)) }
        port = Int(UInt16(bigEndian: address.sin_port))
    }
    func close() { _ = Glibc.close(fd) }
}

/// Binds an ephemeral loopback port and releases it, to learn a free one.
struct HTTPServerProbe {
    let port: Int
    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw NSError(domain: "HTTPServerProbe", code: Int(errno)) }
        port = Int(UInt16(bigEndian: address.sin_port))
    }
}
