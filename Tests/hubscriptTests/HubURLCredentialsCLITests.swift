import Foundation
import XCTest

/// A URL that reaches the Hub never shows a password: a proxy's user and password
/// (`http_proxy=http://alice:…@proxy`) are hidden in the failure messages of run,
/// whoami and doctor (which are also journalled), and a `hub_url` holding a user or
/// password is refused by the configuration, since whoami, doctor, apply's question
/// and every failure message show that URL.
final class HubURLCredentialsCLITests: XCTestCase {
    static let secret = "s3cret-proxy-pw"

    func testAProxysPasswordIsHiddenInRunWhoamiAndDoctor() throws {
        let cli = try CLIHarness(testCase: self)
        let hubPort = try TinyProxy.freePort(), proxyPort = try TinyProxy.freePort()
        let config = try cli.file("closed.config.lua", """
            return { profiles = { closed = { hub_url = "http://127.0.0.1:\(hubPort)", api_key_env = "HUB_KEY",
                                             api_key_permissions = { "users.list" }, rate_limit_per_minute = 0 } } }
            """)
        cli.extraEnvironment = ["HUB_KEY": HubReachCLITests.adaKey, "http_proxy": "http://alice:\(Self.secret)@127.0.0.1:\(proxyPort)",
                                "all_proxy": "", "ALL_PROXY": "", "no_proxy": "", "NO_PROXY": ""]
        try cli.file("count.lua", HubReachCLITests.listing)
        let shown = "http://***@127.0.0.1:\(proxyPort)"
        let start = "profile 'closed': nothing accepts connections at http://127.0.0.1:\(hubPort) or at the proxy \(shown) ("
        let end = "); check that the proxy \(shown) is running (or set NO_PROXY for this host), then the Hub and the port of "
            + "hub_url in profile 'closed'\n"

        let run = try cli.run(["run", "count.lua", "--config", config, "--quiet"])
        XCTAssertTrue(run.stderr.hasPrefix("error: " + start), run.stderr)
        XCTAssertTrue(run.stderr.contains(end), run.stderr)
        XCTAssertEqual(run.status, 7)

        let whoami = try cli.run(["whoami", "--config", config, "--json"])
        XCTAssertTrue(whoami.stderr.hasPrefix("hubscript whoami: " + start), whoami.stderr)
        XCTAssertTrue(whoami.stderr.hasSuffix(end), whoami.stderr)
        XCTAssertEqual(whoami.status, 7)

        let doctor = try cli.run(["doctor", "--config", config])
        XCTAssertTrue(doctor.stdout.contains("FAIL  hub 'closed': nothing accepts connections at http://127.0.0.1:\(hubPort) or at the proxy \(shown) ("),
                      doctor.stdout)
        XCTAssertEqual(doctor.status, 1)

        for (name, text) in [("run", run.stdout + run.stderr), ("whoami", whoami.stdout + whoami.stderr),
                             ("doctor", doctor.stdout + doctor.stderr)] {
            XCTAssertFalse(text.contains(Self.secret), "\(name) shows the proxy's password: \(text)")
        }
        // Nor does the journal, nor any file the commands wrote.
        let files = FileManager.default.enumerator(at: cli.root, includingPropertiesForKeys: nil)?.allObjects as? [URL] ?? []
        XCTAssertTrue(files.contains { $0.lastPathComponent == "journal.sqlite" })
        for file in files {
            guard let data = try? Data(contentsOf: file) else { continue }
            XCTAssertNil(data.range(of: Data(Self.secret.utf8)), "\(file.path) holds the proxy's password")
        }
    }

    func testAHubURLHoldingAUserOrPasswordIsRefused() throws {
        let cli = try CLIHarness(testCase: self)
        for (index, url) in ["https://ops:hunter2@hub.example.com", "https://tok_abc123@hub.example.com/api"].enumerated() {
            let config = try cli.file("userinfo\(index).config.lua", """
                return { profiles = { p = { hub_url = "\(url)", api_key_env = "HUB_KEY" } } }
                """)
            let message = "config \(config): profiles.p.hub_url holds a user or password before '@'; remove it (the credential "
                + "goes in api_key_ref, api_key_env or email: the URL is shown in messages and recorded in the journal)"
            let whoami = try cli.run(["whoami", "--config", config, "--profile", "p"])
            XCTAssertEqual(whoami.stderr, "hubscript whoami: \(message)\n")
            XCTAssertEqual(whoami.stdout, "")
            XCTAssertEqual(whoami.status, 2)
            let doctor = try cli.run(["doctor", "--config", config])
            XCTAssertEqual(doctor.stdout, "FAIL  config: \(message)\n")
            XCTAssertEqual(doctor.status, 1)
        }
    }
}
