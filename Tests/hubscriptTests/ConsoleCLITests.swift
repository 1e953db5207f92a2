import Foundation
import XCTest

/// `hubscript console` as a user starts it: the printed URL, the cookie it sets, the
/// pages over real HTTP (curl), and a clean stop.
final class ConsoleCLITests: XCTestCase {
    /// `curl -s -i` of `url` with `headers`; the whole answer (head and body).
    func curl(_ url: String, _ headers: [String] = []) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        p.arguments = ["-s", "-i"] + headers.flatMap { ["-H", $0] } + [url]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    func testServesTheJournalBehindItsPrintedLink() throws {
        let cli = try CLIHarness(testCase: self)
        let recipe = try cli.file("hello.lua", """
            recipe { name = "hello" }
            print("<script>alert(1)</script>")
            """)
        try cli.run([recipe, "--run-id", "hello<1>"], expect: 0)

        let console = try cli.live(["console", "--port", "0"])
        let url = try XCTUnwrap(console.readLine())
        XCTAssertTrue(url.hasPrefix("http://127.0.0.1:"), url)
        let token = try XCTUnwrap(url.components(separatedBy: "/?token=").last)
        XCTAssertEqual(token.count, 64)
        let base = String(url.dropLast("/?token=".count + 64))

        let denied = try curl(base + "/runs")
        XCTAssertTrue(denied.hasPrefix("HTTP/1.1 401 Unauthorized\r\n"), denied)

        let redirect = try curl(url)
        XCTAssertTrue(redirect.hasPrefix("HTTP/1.1 303 See Other\r\n"), redirect)
        XCTAssertTrue(redirect.contains("\r\nLocation: /\r\n"), redirect)
        let port = try XCTUnwrap(base.split(separator: ":").last)
        let setCookie = try XCTUnwrap(redirect.components(separatedBy: "\r\n").first { $0.hasPrefix("Set-Cookie: ") })
        XCTAssertTrue(setCookie.hasPrefix("Set-Cookie: hubscript_console_\(port)="), setCookie)
        XCTAssertTrue(setCookie.hasSuffix("; Path=/; HttpOnly; SameSite=Strict"), setCookie)
        let cookie = String(setCookie.dropFirst("Set-Cookie: ".count).split(separator: ";")[0])

        let runs = try curl(base + "/runs", ["Cookie: \(cookie)"])
        XCTAssertTrue(runs.hasPrefix("HTTP/1.1 200 OK\r\n"), runs)
        XCTAssertTrue(runs.contains("\r\nContent-Security-Policy: default-src 'none'; script-src 'self';"), runs)
        XCTAssertTrue(runs.contains("<tr class=\"run\" data-run-id=\"hello&lt;1&gt;\">"), runs)
        let run = try curl(base + "/runs/hello%3C1%3E", ["Cookie: \(cookie)"])
        XCTAssertTrue(run.contains("<dd id=\"run-status\" class=\"status status-succeeded\">succeeded (exit 0)</dd>"), run)
        // What the run said is on its page, escaped.
        XCTAssertTrue(run.contains("<span class=\"kind\">print</span> <span class=\"text\"><bdi>&lt;script&gt;alert(1)&lt;/script&gt;</bdi></span>"), run)
        // Probes and scrapers hold no token: the three endpoints answer without one.
        XCTAssertTrue(try curl(base + "/healthz").hasSuffix("\r\n\r\nok\n"))
        XCTAssertTrue(try curl(base + "/readyz").hasSuffix("\r\n\r\nready\n"))
        let metrics = try curl(base + "/metrics")
        XCTAssertTrue(metrics.hasPrefix("HTTP/1.1 200 OK\r\n"), metrics)
        XCTAssertTrue(metrics.contains("\n# TYPE hubscript_journal_reachable gauge\nhubscript_journal_reachable 1\n"), metrics)

        kill(console.process.processIdentifier, SIGTERM)
        XCTAssertTrue(console.waitForExit(within: 20))
        XCTAssertEqual(console.process.terminationStatus, 0)
        XCTAssertTrue(console.stderr.hasSuffix("console: stopping\nconsole: stopped\n"), console.stderr)
    }

    func testRefusesToReachBeyondLoopbackUnlessAsked() throws {
        let cli = try CLIHarness(testCase: self)
        let r = try cli.run(["console", "--bind", "0.0.0.0", "--port", "0"])
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(r.stderr, "hubscript console: --bind 0.0.0.0 reaches beyond this host: the console must then sit behind a "
            + "reverse proxy that terminates TLS; say so with --allow-remote (docs/console.md, \"Remote use\")\n"
            + "Run 'hubscript console --help' for usage.\n")
        XCTAssertEqual(r.stdout, "")
    }

    func testJobsServeServesTheConsoleBesideTheScheduler() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.file("recipes/sync.lua", "recipe { name = \"sync\" }\n")
        let config = try cli.file("hubscript.config.lua", """
            return { jobs = { nightly = { recipe = "recipes/sync.lua", schedule = "0 3 * * *", timezone = "Europe/Paris" } } }
            """)
        let serve = try cli.live(["jobs", "serve", "--console", "0", "--config", config])
        let url = try XCTUnwrap(serve.readLine())
        XCTAssertTrue(url.hasPrefix("http://127.0.0.1:") && url.contains("/?token="), url)
        let base = String(url.prefix { $0 != "?" }.dropLast())
        let cookieLine = try XCTUnwrap(try curl(url).components(separatedBy: "\r\n").first { $0.hasPrefix("Set-Cookie: ") })
        let cookie = String(cookieLine.dropFirst("Set-Cookie: ".count).split(separator: ";")[0])
        let jobs = try curl(base + "/jobs", ["Cookie: \(cookie)"])
        XCTAssertTrue(jobs.contains("<tr class=\"job\" data-job=\"nightly\">"), jobs)
        XCTAssertTrue(jobs.contains("<td class=\"mono\">0 3 * * *</td><td>Europe/Paris</td>"), jobs)
        kill(serve.process.processIdentifier, SIGTERM)
        XCTAssertTrue(serve.waitForExit(within: 20))
        XCTAssertEqual(serve.process.terminationStatus, 0)
        XCTAssertTrue(serve.stderr.contains("jobs serve: console on the journal "), serve.stderr)
    }

    func testListenSetupTakesNoConsole() throws {
        let cli = try CLIHarness(testCase: self)
        let r = try cli.run(["listen", "--setup", "--console", "0"])
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(r.stderr, "hubscript listen: --console goes without --setup (which registers the webhook, then exits)\n"
            + "Run 'hubscript listen --help' for usage.\n")
    }
}
