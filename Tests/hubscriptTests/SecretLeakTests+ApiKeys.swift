import Foundation
import Vault
import XCTest

/// API key secrets never reach the recipe (docs/hub-api.md, API keys), end to end through the built binary: `rotate-api-key.lua`
/// signed in as a user against a served sandbox creates and rotates a key; its secret
/// lands in the vault (it works against the Hub) and in no output (plain, `--json`, a
/// plan), no journal, no plan file and no run folder.
extension SecretLeakTests {
    func testAnAPIKeySecretReachesOnlyTheVault() throws {
        let vault = try VaultCLI(testCase: self)
        let cli = vault.harness
        try vault.initialise()
        cli.extraEnvironment = ["HUBSCRIPT_VAULT_KEY_FILE": vault.keyFile]
        let served = try ServedSandbox(cli, state: cli.root.appendingPathComponent("served-state"), faults: "none")
        defer { served.stop() }
        let config = try cli.file("me.config.lua", """
            return { profiles = { me = { hub_url = "\(served.url)", email = "admin@example.com", rate_limit_per_minute = 0 } } }
            """)
        let login = try cli.run(["login", "--config", config, "--password-stdin", "--mfa-code", "123456"], input: "any password\n")
        XCTAssertEqual(login.status, 0, login.stderr)

        let recipe = CLIHarness.repoRoot.appendingPathComponent("recipes/rotate-api-key.lua").path
        let out = cli.root.appendingPathComponent("out")
        let params = ["--config", config, "--param", "name=ci", "--param", "store=hub/keys/ci"]
        let base = [recipe, "--out", out.path] + params
        var seen: [String] = []
        let planFile = cli.root.appendingPathComponent("rotate.plan.json").path
        let plan = try cli.run(["plan", recipe] + params + ["--param", "permissions=users.list", "--out", planFile], expect: 0)
        seen += [plan.stdout, plan.stderr]
        let first = try cli.run(base + ["--param", "permissions=users.list"], expect: 0)
        XCTAssertTrue(first.stdout.contains("secret stored in the vault entry hub/keys/ci"), first.stdout)
        seen += [first.stdout, first.stderr]
        let rotated = try cli.run(base + ["--param", "force=true", "--param", "grace_hours=0", "--json"], expect: 0)
        XCTAssertTrue(rotated.stdout.contains(#""summary":"create API key 'ci' (live), secret into the vault entry hub/keys/ci""#), rotated.stdout)
        XCTAssertTrue(rotated.stdout.contains(#""summary":"revoke API key key_"#), rotated.stdout)
        seen += [rotated.stdout, rotated.stderr]
        let list = try vault.run(["list", "--key-file", vault.keyFile])
        XCTAssertTrue(list.stdout.contains("hub/keys/ci"), list.stdout)
        seen += [list.stdout, list.stderr]

        // The stored secret is the live key's: it authenticates.
        let opened = try Vault.open(at: vault.folder, key: .keyFile(vault.keyFile))
        let secret = try opened.secret(named: "hub/keys/ci").withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        XCTAssertTrue(secret.hasPrefix("satk_live_"), "the vault holds no key secret")
        XCTAssertEqual(try Self.status(served.url + "/permissions", bearer: secret), "200")

        var files: [URL] = []
        for folder in [cli.stateDir, out, cli.root] {
            let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey])
            while let url = walker?.nextObject() as? URL {
                if url.path.contains("/vault/") || url.path.contains("served-state") || url.lastPathComponent == "vault.key"
                    || url.lastPathComponent.hasPrefix("in-") { continue }
                if (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true { files.append(url) }
            }
        }
        XCTAssertTrue(files.contains { $0.lastPathComponent == "journal.sqlite" }, "\(files)")
        let pattern = "satk_(live|test)_[a-z0-9]{20,}"
        for (n, text) in seen.enumerated() {
            XCTAssertFalse(text.contains(secret), "output \(n) shows the key's secret")
            XCTAssertNil(text.range(of: pattern, options: .regularExpression), "output \(n) shows a key secret: \(text)")
        }
        for file in files {
            let text = String(decoding: try Data(contentsOf: file), as: UTF8.self)
            XCTAssertFalse(text.contains(secret), "\(file.path) holds the key's secret")
            XCTAssertNil(text.range(of: pattern, options: .regularExpression), "\(file.path) holds a key secret")
        }
    }

    /// The HTTP status curl gets for `url` with the bearer token.
    static func status(_ url: String, bearer: String) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        p.arguments = ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Substratal-Version: 1", "-H", "Authorization: Bearer \(bearer)", url]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
