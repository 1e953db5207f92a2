import Foundation
import HTTPKit
import XCTest
import TestSupport

/// `GET /healthz`, `/readyz` and `/metrics` of `listen` and `jobs serve --http`, as a
/// probe and Prometheus meet them: after a known sequence (two job fires; an accepted
/// delivery, a duplicate and a forged one), the counters say exactly that, the gauges
/// agree with the journal, the text passes Prometheus's own checker (`promtool check
/// metrics`), and readiness fails once the journal is gone.
final class HealthMetricsCLITests: XCTestCase {
    /// GET `target` on the server at `base` (`http://127.0.0.1:PORT`).
    func get(_ base: String, _ target: String, method: String = "GET") throws -> (status: Int, body: String, type: String?) {
        let url = try XCTUnwrap(URL(string: base))
        let r = try LoopbackHTTPClient().perform(HTTPRequestMessage(method: method, target: target),
                                                 host: try XCTUnwrap(url.host), port: UInt16(try XCTUnwrap(url.port)), timeout: 10)
        return (r.status, String(decoding: r.body, as: UTF8.self), r.headers["Content-Type"])
    }

    /// The value of the sample line that starts with `series` followed by a space.
    func value(_ text: String, _ series: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }

    /// Checks `text` with `promtool check metrics` (Debian's `prometheus`, installed by
    /// scripts/test). Without promtool the check is skipped locally and fails under CI.
    func checkWithPromtool(_ text: String) throws {
        let candidates = ["/usr/bin/promtool", "/usr/local/bin/promtool"]
        guard let promtool = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            let message = "promtool is not installed (apt-get install prometheus; scripts/test installs it)"
            if ProcessInfo.processInfo.environment["CI"] != nil { XCTFail(message) }
            throw XCTSkip(message)
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: promtool)
        p.arguments = ["check", "metrics"]
        let input = Pipe(), output = Pipe()
        p.standardInput = input
        p.standardOutput = output
        p.standardError = output
        try p.run()
        input.fileHandleForWriting.write(Data(text.utf8))
        try input.fileHandleForWriting.close()
        let said = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, "promtool check metrics: \(said)\n\(text)")
        XCTAssertEqual(said, "", "promtool's lint found problems:\n\(said)")
    }

    // MARK: jobs serve

    func testJobsServeCountsItsFiresAndAnswersProbes() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.file("recipes/notify.lua", JobsCLITests.notify)
        try cli.resetSandbox()
        let config = try cli.file("hubscript.config.lua", """
            return { profiles = { dev = { sandbox = true } },
                     jobs = { tick = { recipe = "recipes/notify.lua", schedule = "* * * * *" } } }
            """)
        // 10:00 is on time at once, 10:01 a second later: two fires.
        let serve = try ListenCLITests.Child(cli, ["jobs", "serve", "--now", "2026-01-01T10:00:59Z", "--http", "127.0.0.1:0",
                                                   "--config", config])
        defer { serve.stop() }
        let base = try serve.wait(for: "health and metrics on (http://127\\.0\\.0\\.1:[0-9]+) \\(/healthz, /readyz, /metrics\\)")
        XCTAssertEqual(try get(base, "/healthz").status, 200)
        XCTAssertEqual(try get(base, "/healthz").body, "ok\n")
        var text = ""
        XCTAssertTrue(ListenCLITests.waitUntil(60) {
            text = (try? get(base, "/metrics").body) ?? ""
            return value(text, #"hubscript_fires_total{job="tick",outcome="succeeded"}"#) == 2
        }, text + serve.output)
        let ready = try get(base, "/readyz")
        XCTAssertEqual(ready.status, 200, ready.body)
        XCTAssertEqual(ready.body, "ready\n")
        let scrape = try get(base, "/metrics")
        XCTAssertEqual(scrape.type, "text/plain; version=0.0.4; charset=utf-8")
        text = scrape.body
        XCTAssertEqual(value(text, #"hubscript_runs_total{kind="job",outcome="done"}"#), 2, text)
        XCTAssertEqual(value(text, #"hubscript_runs_total{kind="job",outcome="failed"}"#), 0, text)
        XCTAssertEqual(value(text, #"hubscript_run_duration_seconds_count{kind="job"}"#), 2, text)
        XCTAssertEqual(value(text, #"hubscript_run_duration_seconds_bucket{kind="job",le="+Inf"}"#), 2, text)
        XCTAssertEqual(value(text, #"hubscript_writes_total{result="sent"}"#), 2, text)
        XCTAssertEqual(value(text, #"hubscript_writes_total{result="failed"}"#), 0, text)
        XCTAssertEqual(value(text, #"hubscript_hub_rate_limited_total{class="caller"}"#), nil, text)
        XCTAssertEqual(value(text, "hubscript_journal_reachable"), 1, text)
        XCTAssertFalse(text.contains("hubscript_deliveries_total{"), "no receiver, no delivery series: \(text)")
        // The gauges agree with the journal: its file's size, its oldest run.
        let journalFile = cli.stateDir.appendingPathComponent("journal/journal.sqlite").path
        let size = try XCTUnwrap(value(text, "hubscript_journal_size_bytes"), text)
        XCTAssertGreaterThanOrEqual(size, Double(try XCTUnwrap(FileManager.default.attributesOfItem(atPath: journalFile)[.size] as? Int)))
        let runs = try cli.run(["runs", "list", "--json", "--config", config])
        let starts = runs.stdout.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["started_at"] as? String
        }
        XCTAssertEqual(starts.count, 2, runs.output)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let oldest = try XCTUnwrap(starts.compactMap { formatter.date(from: $0) ?? ISO8601DateFormatter().date(from: $0) }.min(), "\(starts)")
        let exposed = try XCTUnwrap(value(text, "hubscript_journal_oldest_run_start_time_seconds"), text)
        XCTAssertEqual(exposed, oldest.timeIntervalSince1970, accuracy: 1, text)
        XCTAssertNotNil(value(text, "hubscript_run_folder_size_bytes"), text)
        try checkWithPromtool(text)
        // Any other path on this port is not found; another method on these is 405.
        let other = try get(base, "/hooks")
        XCTAssertEqual(other.status, 404)
        XCTAssertEqual(other.body, "not found: this server answers GET /healthz, /readyz and /metrics\n")
        XCTAssertEqual(try get(base, "/metrics", method: "POST").status, 405)
        // The journal gone: not ready, with the reason; still alive.
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: journalFile + suffix) }
        let gone = try get(base, "/readyz")
        XCTAssertEqual(gone.status, 503)
        XCTAssertEqual(gone.body, "not ready: the journal is not reachable: the journal file \(journalFile) is gone (deleted or moved): restart the command to make a new one, or put it back\n")
        XCTAssertEqual(try get(base, "/healthz").status, 200)
        XCTAssertEqual(value(try get(base, "/metrics").body, "hubscript_journal_reachable"), 0)
        serve.stop()
        XCTAssertEqual(serve.process.terminationStatus, 0, serve.output)
    }

    /// From SIGTERM on, while the running fire finishes, `/readyz` says the scheduler is
    /// stopping (a load balancer stops sending, a rollout waits) and `/healthz` stays ok.
    func testJobsServeIsNotReadyOnceStopping() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.file("recipes/slow.lua", JobsCLITests.notify.replacingOccurrences(of: "for u in", with: """
            print("slow started")
            local t0 = os.clock()
            while os.clock() - t0 < 4 do end
            for u in
            """))
        try cli.resetSandbox()
        let config = try cli.file("hubscript.config.lua", """
            return { profiles = { dev = { sandbox = true } },
                     jobs = { slow = { recipe = "recipes/slow.lua", schedule = "0 * * * *" } } }
            """)
        let serve = try ListenCLITests.Child(cli, ["jobs", "serve", "--now", "2026-01-01T10:00:01Z", "--http", "0",
                                                   "--config", config])
        defer { serve.stop() }
        let base = try serve.wait(for: "health and metrics on (http://127\\.0\\.0\\.1:[0-9]+) ")
        _ = try serve.wait(for: "slow started")
        XCTAssertEqual(try get(base, "/readyz").body, "ready\n")
        kill(serve.process.processIdentifier, SIGTERM)
        var answer = (status: 0, body: "", type: String?.none)
        XCTAssertTrue(ListenCLITests.waitUntil(3) {
            answer = (try? get(base, "/readyz")) ?? (0, "", nil)
            return answer.status != 200
        })
        XCTAssertEqual(answer.status, 503, answer.body + serve.output)
        XCTAssertEqual(answer.body, "not ready: the scheduler is stopping\n")
        XCTAssertEqual(try get(base, "/healthz").status, 200)
        serve.process.waitUntilExit()
        XCTAssertEqual(serve.process.terminationStatus, 0, serve.output)
        XCTAssertTrue(serve.output.contains("slow@2026-01-01T10:00:00Z succeeded in "), serve.output)
    }

    /// On a PostgreSQL journal: its size is its tables', and a server that stops makes
    /// the process unready, with the reason, until it is back.
    func testOnAPostgreSQLJournalReadinessFollowsTheServer() throws {
        let own = try TestPostgres.OwnServer()
        let cli = try CLIHarness(testCase: self)
        try cli.file("recipes/notify.lua", JobsCLITests.notify)
        try cli.resetSandbox()
        let config = try cli.file("hubscript.config.lua", """
            return { profiles = { dev = { sandbox = true } }, journal = "\(own.url)",
                     jobs = { tick = { recipe = "recipes/notify.lua", schedule = "* * * * *" } } }
            """)
        let serve = try ListenCLITests.Child(cli, ["jobs", "serve", "--now", "2026-01-01T10:00:59Z", "--http", "0",
                                                   "--config", config])
        defer { serve.stop() }
        let base = try serve.wait(for: "health and metrics on (http://127\\.0\\.0\\.1:[0-9]+) ")
        var text = ""
        XCTAssertTrue(ListenCLITests.waitUntil(60) {
            text = (try? get(base, "/metrics").body) ?? ""
            return value(text, #"hubscript_fires_total{job="tick",outcome="succeeded"}"#) == 2
        }, text + serve.output)
        XCTAssertEqual(try get(base, "/readyz").body, "ready\n")
        XCTAssertGreaterThan(try XCTUnwrap(value(text, "hubscript_journal_size_bytes"), text), 8192)
        XCTAssertNotNil(value(text, "hubscript_journal_oldest_run_start_time_seconds"), text)
        try checkWithPromtool(text)
        try own.stop()
        let down = try get(base, "/readyz")
        XCTAssertEqual(down.status, 503)
        XCTAssertTrue(down.body.hasPrefix("not ready: the journal is not reachable: the PostgreSQL journal is out of reach: "), down.body)
        XCTAssertEqual(down.body.filter { $0 == "\n" }.count, 1, down.body)
        XCTAssertFalse(down.body.contains("password"), down.body)
        let scrape = try get(base, "/metrics").body
        XCTAssertEqual(value(scrape, "hubscript_journal_reachable"), 0, scrape)
        XCTAssertNil(value(scrape, "hubscript_journal_size_bytes"), scrape)
        XCTAssertEqual(try get(base, "/healthz").status, 200)
        try own.start()
        var back = (0, "")
        XCTAssertTrue(ListenCLITests.waitUntil(30) {
            back = ((try? get(base, "/readyz")).map { ($0.status, $0.body) }) ?? (0, "")
            return back.0 == 200
        }, "\(back)")
        serve.stop()
        XCTAssertEqual(serve.process.terminationStatus, 0, serve.output)
    }

    func testHTTPAddressMistakesAreUsageErrors() throws {
        let cli = try CLIHarness(testCase: self)
        let config = try cli.file("hubscript.config.lua", """
            return { profiles = { dev = { sandbox = true } }, jobs = { tick = { recipe = "x.lua", schedule = "* * * * *" } } }
            """)
        for bad in ["nine", "127.0.0.1", "host.example:80", "127.0.0.1:99999", ":80", "[::1]80"] {
            let r = try cli.run(["jobs", "serve", "--http", bad, "--config", config])
            XCTAssertEqual(r.status, 2, r.output)
            XCTAssertEqual(r.stderr, """
                hubscript jobs serve: --http takes PORT, ADDRESS:PORT or [IPv6]:PORT, such as 127.0.0.1:9464 or 0.0.0.0:9464, got '\(bad)'
                Run 'hubscript jobs serve --help' for usage.

                """, bad)
        }
    }

    // MARK: listen

    func testListenCountsDeliveriesAndItsRun() throws {
        let vault = try VaultCLI(testCase: self)
        try vault.initialise()
        let cli = vault.harness
        cli.extraEnvironment = ["HUBSCRIPT_VAULT_KEY_FILE": vault.keyFile]
        try cli.resetSandbox(users: 40)
        let secret = "whsec_metricstest0123456789"
        let set = try vault.run(["set", "webhooks/hub", "--key-file", vault.keyFile], stdin: secret)
        XCTAssertEqual(set.status, 0, set.stderr)
        try cli.file("on-suspend.lua", ListenCLITests.recipe(pauseMs: 0))
        let config = try cli.file("hubscript.config.lua", """
            return {
              profiles = { dev = { sandbox = true } },
              triggers = { offboard = { on = { "user.suspended" }, recipe = "on-suspend.lua", secret = "webhooks/hub" } },
            }
            """)
        let listener = try ListenCLITests.Child(cli, ["listen", "--port", "0", "--config", config])
        defer { listener.stop() }
        let base = try listener.wait(for: "listening on (http://127\\.0\\.0\\.1:[0-9]+)")
        let body = #"{"id":"wev_metrics0001","type":"user.suspended","data":{"user_id":"usr_ada"}}"#
        func post(_ key: String) throws -> Int {
            let t = Int(Date().timeIntervalSince1970)
            var headers = HTTPHeaders()
            headers.add("Content-Type", "application/json")
            headers.add("Substratal-Signature", "t=\(t),v1=" + WebhookSignature.hex(secret: key, timestamp: t, body: Data(body.utf8)))
            let url = try XCTUnwrap(URL(string: base))
            return try LoopbackHTTPClient().perform(HTTPRequestMessage(method: "POST", target: "/hooks", headers: headers, body: Data(body.utf8)),
                                                    host: try XCTUnwrap(url.host), port: UInt16(try XCTUnwrap(url.port)), timeout: 10).status
        }
        XCTAssertEqual(try post(secret), 202)
        XCTAssertEqual(try post("whsec_forged"), 401)
        var text = ""
        XCTAssertTrue(ListenCLITests.waitUntil(60) {
            text = (try? get(base, "/metrics").body) ?? ""
            return value(text, #"hubscript_runs_total{kind="trigger",outcome="done"}"#) == 1
        }, text + listener.output)
        XCTAssertEqual(try post(secret), 202, "a delivery of a finished event")
        text = try get(base, "/metrics").body
        XCTAssertEqual(value(text, #"hubscript_deliveries_total{result="accepted"}"#), 1, text)
        XCTAssertEqual(value(text, #"hubscript_deliveries_total{result="duplicate"}"#), 1, text)
        XCTAssertEqual(value(text, #"hubscript_deliveries_total{result="rejected_signature"}"#), 1, text)
        XCTAssertEqual(value(text, #"hubscript_deliveries_total{result="malformed"}"#), 0, text)
        XCTAssertEqual(value(text, #"hubscript_runs_resumed_total{kind="trigger"}"#), 0, text)
        XCTAssertEqual(value(text, #"hubscript_writes_total{result="sent"}"#), 3, text)
        XCTAssertEqual(value(text, #"hubscript_run_duration_seconds_count{kind="trigger"}"#), 1, text)
        XCTAssertNil(value(text, #"hubscript_runs_total{kind="job",outcome="done"}"#), text)
        try checkWithPromtool(text)
        let ready = try get(base, "/readyz")
        XCTAssertEqual(ready.status, 200, ready.body)
        XCTAssertEqual(try get(base, "/healthz").body, "ok\n")
        // Deliveries still go to the receiver on any other path; GET there is still 405.
        XCTAssertEqual(try get(base, "/hooks").status, 405)
        listener.stop()
        XCTAssertEqual(listener.process.terminationStatus, 0, listener.output)
    }
}
