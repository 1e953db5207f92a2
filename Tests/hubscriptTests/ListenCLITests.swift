import Foundation
import HTTPKit
import HubSandbox
import XCTest

/// `hubscript listen` against a served sandbox Hub (docs/webhooks.md): real deliveries,
/// signed by the sandbox, verified with the secret from the vault; each event runs the
/// trigger's recipe once, however often it is delivered; a forged or stale delivery runs
/// nothing; a listener killed mid-recipe resumes, and every write reaches the Hub once.
final class ListenCLITests: XCTestCase {
    /// A trigger recipe: three notifications to the suspended user, `pause` ms of CPU
    /// time before each.
    static func recipe(pauseMs: Int) -> String {
        """
        recipe {
          name = "on-suspend",
          version = "1.0.0",
          description = "Test fixture: tell a suspended user three times.",
          params = { event = { type = "table", required = true } },
          needs = { "notifications.send" },
        }
        local user = params.event.data.user_id
        for i = 1, 3 do
          local t = os.clock()
          while (os.clock() - t) * 1000 < \(pauseMs) do end
          hub.notifications.send("app_hub", { user_id = user, title = "Suspended " .. i, body = "Event " .. params.event.id,
                                              category = "security" })
        end
        print("notified " .. user)
        """
    }

    static let suspendRecipe = """
        recipe {
          name = "suspend-some",
          version = "1.0.0",
          description = "Test fixture: suspend the first N active users.",
          params = { count = { type = "integer", default = 3 } },
          needs = { "users.list", "users.manage" },
        }
        local n = 0
        for u in hub.users.list { status = "active" } do
          if n >= params.count then break end
          if u.id ~= "usr_admin" then
            hub.users.suspend(u.id, { reason = "test" })
            print(u.id)
            n = n + 1
          end
        end
        """

    /// A running child whose stdout and stderr are collected as they come.
    final class Child: @unchecked Sendable {
        let process: Process
        private let lock = NSLock()
        private var text = ""

        init(_ cli: CLIHarness, _ args: [String]) throws {
            let (p, out, err) = cli.process(args)
            process = p
            for pipe in [out, err] {
                pipe.fileHandleForReading.readabilityHandler = { [weak self] h in
                    let d = h.availableData
                    self?.lock.withLock { self?.text += String(decoding: d, as: UTF8.self) }
                }
            }
            try p.run()
        }

        var output: String { lock.withLock { text } }

        /// Waits until the output matches `pattern`; returns its first capture group.
        func wait(for pattern: String, timeout: Double = 30) throws -> String {
            let regex = try NSRegularExpression(pattern: pattern)
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                let t = output
                if let m = regex.firstMatch(in: t, range: NSRange(t.startIndex..., in: t)) {
                    return m.numberOfRanges > 1 ? String(t[Range(m.range(at: 1), in: t)!]) : String(t[Range(m.range, in: t)!])
                }
                if !process.isRunning { break }
                usleep(20_000)
            }
            throw NSError(domain: "ListenCLITests", code: 1, userInfo: [NSLocalizedDescriptionKey: "no '\(pattern)' in:\n\(output)"])
        }

        func stop(_ signo: Int32 = SIGTERM) {
            if process.isRunning { kill(process.processIdentifier, signo) }
            process.waitUntilExit()
        }
    }

    struct Setup {
        let vault: VaultCLI
        let cli: CLIHarness
        let sandbox: Child
        let hubURL: String
        let config: String
    }

    /// A vault, a served sandbox (`faults`), and a config with profile `lab` and the
    /// trigger `offboard` on user.suspended.
    func prepare(faults: String? = nil, pauseMs: Int = 0) throws -> Setup {
        let vault = try VaultCLI(testCase: self)
        try vault.initialise()
        let cli = vault.harness
        cli.extraEnvironment = ["HUBSCRIPT_VAULT_KEY_FILE": vault.keyFile]
        try cli.resetSandbox(users: 40)
        let sandbox = try Child(cli, ["sandbox", "serve", "--port", "0", "--dispatch-port", "0", "--rate-limits", "off"]
                                + (faults.map { ["--faults", $0] } ?? []))
        let hubURL = try sandbox.wait(for: "Sandbox Hub +(http://127\\.0\\.0\\.1:[0-9]+)")
        try cli.file("on-suspend.lua", Self.recipe(pauseMs: pauseMs))
        try cli.file("suspend-some.lua", Self.suspendRecipe)
        let config = try cli.file("hubscript.config.lua", """
            return {
              profiles = { lab = { hub_url = "\(hubURL)", api_key = "\(SandboxFixtures.jobsKeySecret)", api_key_id = "key_jobs" } },
              triggers = {
                offboard = { on = { "user.suspended" }, recipe = "on-suspend.lua", profile = "lab", secret = "webhooks/hub" },
              },
            }
            """)
        return Setup(vault: vault, cli: cli, sandbox: sandbox, hubURL: hubURL, config: config)
    }

    func startListener(_ s: Setup, port: String = "0") throws -> (Child, String) {
        let listener = try Child(s.cli, ["listen", "--port", port, "--config", s.config])
        let url = try listener.wait(for: "listening on (http://127\\.0\\.0\\.1:[0-9]+)")
        return (listener, url)
    }

    /// Sends `method target` to the served Hub with the jobs key.
    func hub(_ s: Setup, _ method: String, _ target: String, body: String? = nil) throws -> [String: Any] {
        let url = URL(string: s.hubURL)!
        var headers = HTTPHeaders()
        headers.add("Substratal-Version", "1")
        headers.add("Authorization", "Bearer \(SandboxFixtures.jobsKeySecret)")
        headers.add("Content-Type", "application/json")
        let r = try LoopbackHTTPClient().perform(HTTPRequestMessage(method: method, target: target, headers: headers,
                                                                    body: Data((body ?? "").utf8)),
                                                 host: url.host!, port: UInt16(url.port!), timeout: 10)
        XCTAssertTrue((200..<300).contains(r.status), "\(method) \(target): \(r.status) \(String(decoding: r.body, as: UTF8.self))")
        return (try? JSONSerialization.jsonObject(with: r.body)) as? [String: Any] ?? [:]
    }

    /// Creates the webhook to `listenURL` and stores its secret in the vault entry the trigger names.
    func subscribe(_ s: Setup, _ listenURL: String) throws -> (id: String, secret: String) {
        let w = try hub(s, "POST", "/webhooks", body: #"{"url":"\#(listenURL)/hooks","events":["user.suspended"]}"#)
        let secret = try XCTUnwrap(w.string("signing_secret"))
        let set = try s.vault.run(["set", "webhooks/hub", "--key-file", s.vault.keyFile], stdin: secret)
        XCTAssertEqual(set.status, 0, set.stderr)
        return (try XCTUnwrap(w.string("id")), secret)
    }

    /// The fixture's notifications (`notification.sent` audit events titled "Suspended …") per user.
    func notified(_ s: Setup) throws -> [String: Int] { try Self.notified(in: SandboxReader(served: s.hubURL)) }

    /// The same, read from any sandbox (served, or the built-in one's file).
    static func notified(in sandbox: SandboxReader) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for e in try sandbox.all("/audit-events", "action=notification.sent&since=2020-01-01T00:00:00Z")
            where ((e["after"] as? [String: Any])?["title"] as? String)?.hasPrefix("Suspended ") == true {
            counts[e.string("target_user_id") ?? "?", default: 0] += 1
        }
        return counts
    }

    func waitUntil(_ timeout: Double = 60, _ condition: () throws -> Bool) rethrows -> Bool {
        try Self.waitUntil(timeout, condition)
    }

    /// Polls `condition` every 0.1 s until it holds or `timeout` seconds pass.
    static func waitUntil(_ timeout: Double, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try condition() { return true }
            usleep(100_000)
        }
        return try condition()
    }

    func testEachEventRunsTheTriggerOnceEvenWhenDeliveredTwice() throws {
        let s = try prepare(faults: "dup=1")
        defer { s.sandbox.stop() }
        let (listener, listenURL) = try startListener(s)
        defer { listener.stop() }
        _ = try subscribe(s, listenURL)
        let run = try s.cli.run(["suspend-some.lua", "--profile", "lab", "--config", s.config])
        XCTAssertEqual(run.status, 0, run.output)
        let users = run.stdout.split(separator: "\n").map(String.init).filter { $0.hasPrefix("usr_") }
        XCTAssertEqual(users.count, 3, run.output)
        XCTAssertTrue(try waitUntil { try notified(s).values.reduce(0, +) >= 9 }, listener.output)
        // Both copies of every event arrived (the dup fault), and only one ran.
        XCTAssertTrue(waitUntil(10) { listener.output.components(separatedBy: "duplicate delivery").count
                                      + listener.output.components(separatedBy: "already done").count - 2 >= 3 }, listener.output)
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertEqual(try notified(s), Dictionary(uniqueKeysWithValues: users.map { ($0, 3) }), listener.output)
        XCTAssertEqual(listener.output.components(separatedBy: " succeeded in ").count - 1, 3, listener.output)
        listener.stop()
        XCTAssertEqual(listener.process.terminationStatus, 0, listener.output)
    }

    /// Posts a delivery straight to the listener.
    func post(_ listenURL: String, body: String, signature: String) throws -> Int {
        let url = URL(string: listenURL)!
        var headers = HTTPHeaders()
        headers.add("Content-Type", "application/json")
        headers.add("Substratal-Signature", signature)
        let r = try LoopbackHTTPClient().perform(HTTPRequestMessage(method: "POST", target: "/hooks", headers: headers, body: Data(body.utf8)),
                                                 host: url.host!, port: UInt16(url.port!), timeout: 10)
        return r.status
    }

    func testForgedAndStaleDeliveriesAreRefusedAndRunNothing() throws {
        let s = try prepare()
        defer { s.sandbox.stop() }
        let (listener, listenURL) = try startListener(s)
        defer { listener.stop() }
        let (_, secret) = try subscribe(s, listenURL)
        let body = #"{"id":"wev_forged0001","type":"user.suspended","api_version":"2026-10-05","created_at":"2026-01-01T00:00:00Z","test_mode":true,"data":{"user_id":"usr_ada"}}"#
        let now = Int(Date().timeIntervalSince1970)
        func sign(_ key: String, _ t: Int) -> String { "t=\(t),v1=" + WebhookSignature.hex(secret: key, timestamp: t, body: Data(body.utf8)) }
        XCTAssertEqual(try post(listenURL, body: body, signature: sign("whsec_forged", now)), 401)
        XCTAssertEqual(try post(listenURL, body: body, signature: sign(secret, now - 301)), 401)
        XCTAssertEqual(try post(listenURL, body: body, signature: sign(secret, now + 400)), 401)
        XCTAssertEqual(try post(listenURL, body: body, signature: "t=\(now)"), 401)
        XCTAssertEqual(try post(listenURL, body: body + " ", signature: sign(secret, now)), 401)
        Thread.sleep(forTimeInterval: 1)
        XCTAssertEqual(try notified(s), [:], listener.output)
        XCTAssertFalse(listener.output.contains("received"), listener.output)
        XCTAssertTrue(listener.output.contains("webhook refused (401)"), listener.output)
        // The same delivery, signed right, runs once; sent three times, still once.
        for _ in 0..<3 { XCTAssertEqual(try post(listenURL, body: body, signature: sign(secret, now)), 202) }
        XCTAssertTrue(try waitUntil { try notified(s)["usr_ada"] == 3 }, listener.output)
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertEqual(try notified(s), ["usr_ada": 3], listener.output)
    }

    /// A trigger's run loads the configuration's libraries (pins checked) and may name a
    /// library recipe (`ops:on_lib`), and its `allow` refuses a recipe that needs more
    /// before anything runs.
    func testTriggersLoadLibrariesAndHonourAllow() throws {
        let s = try prepare()
        defer { s.sandbox.stop() }
        try s.cli.file("shared/ops/tell.lua", "return { title = function(i) return 'Suspended ' .. i end }\n")
        try s.cli.file("shared/ops/on_lib.lua", """
            recipe {
              name = "on-lib", version = "1.0.0", description = "Test fixture: a trigger recipe using a library.",
              params = { event = { type = "table", required = true } }, needs = { "notifications.send" },
            }
            local tell = require("ops.tell")
            for i = 1, 3 do
              hub.notifications.send("app_hub", { user_id = params.event.data.user_id, title = tell.title(i),
                                                  body = "Event " .. params.event.id, category = "security" })
            end
            """)
        try s.cli.file("hubscript.config.lua", """
            return {
              profiles = { lab = { hub_url = "\(s.hubURL)", api_key = "\(SandboxFixtures.jobsKeySecret)", api_key_id = "key_jobs" } },
              libraries = { ops = "shared/ops" },
              triggers = {
                told = { on = { "user.suspended" }, recipe = "ops:on_lib", profile = "lab", secret = "webhooks/hub",
                         allow = { "notifications.send" } },
                narrow = { on = { "user.suspended" }, recipe = "on-suspend.lua", profile = "lab", secret = "webhooks/hub",
                           allow = { "users.list" } },
              },
            }
            """)
        XCTAssertEqual(try s.cli.run(["trust", "--config", s.config]).status, 0)
        let (listener, listenURL) = try startListener(s)
        defer { listener.stop() }
        let (_, secret) = try subscribe(s, listenURL)
        let body = #"{"id":"wev_lib0001","type":"user.suspended","api_version":"2026-10-05","created_at":"2026-01-01T00:00:00Z","test_mode":true,"data":{"user_id":"usr_ada"}}"#
        let now = Int(Date().timeIntervalSince1970)
        let signature = "t=\(now),v1=" + WebhookSignature.hex(secret: secret, timestamp: now, body: Data(body.utf8))
        XCTAssertEqual(try post(listenURL, body: body, signature: signature), 202)
        XCTAssertTrue(waitUntil { listener.output.contains("told@wev_lib0001 succeeded") && listener.output.contains("narrow@wev_lib0001 failed") },
                      listener.output)
        XCTAssertTrue(listener.output.contains("narrow@wev_lib0001 failed (exit 3) in "), listener.output)
        XCTAssertTrue(listener.output.contains(#"not allowed: the recipe needs notifications.send, beyond what trigger "narrow" allows (users.list); nothing ran."#),
                      listener.output)
        XCTAssertEqual(try notified(s), ["usr_ada": 3], listener.output)
    }

    func testKillMidRecipeThenRedeliveryCompletesEachWriteOnce() throws {
        let s = try prepare(pauseMs: 1500)
        defer { s.sandbox.stop() }
        var (listener, listenURL) = try startListener(s)
        let port = String(listenURL.split(separator: ":").last!)
        let (webhook, _) = try subscribe(s, listenURL)
        _ = try hub(s, "POST", "/users/usr_ada/suspend", body: "{}")
        // Killed after the first of the three notifications reached the Hub.
        XCTAssertTrue(try waitUntil { try notified(s)["usr_ada", default: 0] >= 1 }, listener.output)
        listener.stop(SIGKILL)
        XCTAssertEqual(try notified(s)["usr_ada"], 1)
        // The Hub redelivers while nothing listens (the attempt fails), then to the new listener.
        let deliveries = try hub(s, "GET", "/webhooks/\(webhook)/deliveries")["data"] as? [[String: Any]] ?? []
        let delivery = try XCTUnwrap(deliveries.first?.string("id"))
        (listener, listenURL) = try startListener(s, port: port)
        defer { listener.stop() }
        _ = try hub(s, "POST", "/webhooks/\(webhook)/deliveries/\(delivery)/redeliver")
        XCTAssertTrue(try waitUntil { try notified(s)["usr_ada", default: 0] >= 3 }, listener.output)
        XCTAssertTrue(waitUntil(20) { listener.output.contains(" succeeded in ") }, listener.output)
        Thread.sleep(forTimeInterval: 1)
        XCTAssertEqual(try notified(s), ["usr_ada": 3], listener.output)
        XCTAssertTrue(listener.output.contains("offboard@wev_"), listener.output)
    }
}
