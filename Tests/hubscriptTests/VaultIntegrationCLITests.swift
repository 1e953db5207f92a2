import Foundation
import Vault
import XCTest

/// The vault as `hubscript` uses it beyond `hubscript vault`: profiles' `api_key_ref`,
/// `login` sessions, and `vault:` exports, run through the built binary.
final class VaultIntegrationCLITests: XCTestCase {
    static let sandboxKey = "satk_test_jobs_sandbox_0000000000000000"

    /// A harness whose state directory has a vault opened by the key file (given to
    /// children through `$HUBSCRIPT_VAULT_KEY_FILE` when `unlocked`).
    func vaultCLI(unlocked: Bool = true) throws -> VaultCLI {
        let vault = try VaultCLI(testCase: self)
        try vault.initialise()
        if unlocked { vault.harness.extraEnvironment["HUBSCRIPT_VAULT_KEY_FILE"] = vault.keyFile }
        return vault
    }

    func served(_ cli: CLIHarness) throws -> ServedSandbox {
        let hubState = cli.root.appendingPathComponent("hub-state")
        try cli.resetSandbox(state: hubState)
        return try ServedSandbox(cli, state: hubState, faults: "none")
    }

    func profileConfig(_ cli: CLIHarness, url: String, _ auth: String) throws -> String {
        try cli.file("config-\(UUID().uuidString).lua", """
            return { profiles = { served = { hub_url = "\(url)", \(auth), rate_limit_per_minute = 0 } } }
            """)
    }

    // MARK: api_key_ref

    func testAPIKeyRefHappyPathAndErrors() throws {
        let vault = try vaultCLI()
        let cli = vault.harness
        let server = try served(cli)
        defer { server.stop() }
        XCTAssertEqual(try vault.run(["set", "hub/served", "--key-file", vault.keyFile], stdin: Self.sandboxKey + "\n").status, 0)
        let recipe = try cli.file("ada.lua", """
            recipe { name = "ada", needs = { "users.list" } }
            print(hub.users.get("ada@example.com").id)
            """)
        let config = try profileConfig(cli, url: server.url, #"api_key_ref = "hub/served""#)
        let ok = try cli.run([recipe, "--config", config], expect: 0)
        XCTAssertEqual(ok.stdout, "usr_ada\n")
        XCTAssertFalse(ok.stderr.contains("hint"), ok.stderr)
        XCTAssertFalse(ok.output.contains(Self.sandboxKey))

        // The entry missing.
        let missing = try profileConfig(cli, url: server.url, #"api_key_ref = "hub/none""#)
        let noEntry = try cli.run([recipe, "--config", missing], expect: 2)
        XCTAssertEqual(noEntry.stdout, "")
        XCTAssertEqual(noEntry.stderr, """
            error: secret_not_found: Profile served reads its API key from the vault entry 'hub/none': no vault entry 'hub/none' in \
            \(vault.folder.path): add it with `hubscript vault set hub/none` (the value is read from stdin). \
            For CI, api_key_env = "VARIABLE" reads the key from the environment instead.

            """)

        // The vault locked (no key in the environment).
        cli.extraEnvironment["HUBSCRIPT_VAULT_KEY_FILE"] = nil
        let locked = try cli.run([recipe, "--config", config], expect: 2)
        XCTAssertEqual(locked.stderr, """
            error: vault_locked: Profile served reads its API key from the vault entry 'hub/served': the vault in \
            \(vault.folder.path) is locked: set HUBSCRIPT_VAULT_KEY (or HUBSCRIPT_VAULT_KEY_FILE, or HUBSCRIPT_VAULT_PASSPHRASE). \
            For CI, api_key_env = "VARIABLE" reads the key from the environment instead.

            """)
        // Other commands say the same, as a usage-class error (exit 2).
        let logout = try cli.run(["logout", "--config", config], expect: 2)
        XCTAssertTrue(logout.stderr.hasPrefix("hubscript logout: vault_locked: Profile served reads its API key"), logout.stderr)
    }

    func testAPlainKeyGetsAOneLineHintUnlessQuietOrOnThisMachine() throws {
        let cli = try CLIHarness(testCase: self)
        // A recipe that makes no request: the hint comes when the connection is opened.
        let recipe = try cli.file("hi.lua", """
            recipe { name = "hi" }
            print("hi")
            """)
        let remote = try profileConfig(cli, url: "https://hub.example.invalid", #"api_key = "satk_live_0000""#)
        let hint = "hubscript: hint: profile 'served' has its API key in plain text; store it encrypted with `hubscript vault set hub/served` and set api_key_ref = \"hub/served\"\n"
        let run = try cli.run([recipe, "--config", remote], expect: 0)
        XCTAssertEqual(run.stdout, "hi\n")
        XCTAssertTrue(run.stderr.hasPrefix(hint), run.stderr)
        XCTAssertEqual(run.stderr.components(separatedBy: "hubscript: hint:").count, 2, "once")
        let quiet = try cli.run([recipe, "--config", remote, "--quiet"], expect: 0)
        XCTAssertFalse(quiet.stderr.contains("hint"), quiet.stderr)
        cli.extraEnvironment["SERVED_KEY"] = Self.sandboxKey
        let env = try profileConfig(cli, url: "https://hub.example.invalid", #"api_key_env = "SERVED_KEY""#)
        let fromEnvironment = try cli.run([recipe, "--config", env], expect: 0)
        XCTAssertTrue(fromEnvironment.stderr.hasPrefix(hint), fromEnvironment.stderr)
        // A Hub on this machine (a served sandbox) is a developer's: no hint.
        let server = try served(cli)
        defer { server.stop() }
        let local = try cli.run([recipe, "--config", server.config], expect: 0)
        XCTAssertFalse(local.stderr.contains("hint"), local.stderr)
    }

    // MARK: Sessions

    /// `login --password-stdin --mfa-code 123456` for the profile `me`.
    func login(_ cli: CLIHarness, config: String) throws -> CLIHarness.Result {
        try cli.run(["login", "--config", config, "--password-stdin", "--mfa-code", "123456"], input: "any password\n")
    }

    /// Every regular file under `folder` that contains `needle`.
    func filesContaining(_ needle: String, under folder: URL) -> [String] {
        let bytes = Data(needle.utf8)
        var found: [String] = []
        let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)
        while let url = walker?.nextObject() as? URL {
            if let data = try? Data(contentsOf: url), data.range(of: bytes) != nil { found.append(url.path) }
        }
        return found
    }

    func storedRefreshToken(_ vault: VaultCLI) throws -> String {
        let json = try vault.value("sessions/me")
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        return try XCTUnwrap(object?["refreshToken"] as? String, json)
    }

    func testLoginWithoutAVaultThenWithOneAndLogout() throws {
        let vault = try VaultCLI(testCase: self)
        let cli = vault.harness
        let server = try served(cli)
        defer { server.stop() }
        let config = try cli.file("me.config.lua", """
            return { profiles = { me = { hub_url = "\(server.url)", email = "admin@example.com", rate_limit_per_minute = 0 } } }
            """)
        let credentials = cli.stateDir.appendingPathComponent("credentials")
        let file = credentials.appendingPathComponent("me.json")

        // No vault: the file store, and a hint.
        let first = try login(cli, config: config)
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertEqual(first.stdout, "Signed in to 'me' as admin@example.com.\n")
        XCTAssertEqual(first.stderr, "hubscript: hint: the session is kept in \(credentials.path) (mode 0600); run `hubscript vault init` to keep sessions encrypted in the vault instead\n")
        XCTAssertTrue(FileManager.default.fileExists(atPath: file.path))

        // A vault appears: the next command moves the session in, says so once.
        try vault.initialise()
        cli.extraEnvironment["HUBSCRIPT_VAULT_KEY_FILE"] = vault.keyFile
        let recipe = try cli.file("whoami.lua", """
            recipe { name = "whoami", needs = { "users.list" } }
            print(hub.capabilities().user_id)
            """)
        let moved = try cli.run([recipe, "--config", config], expect: 0)
        XCTAssertEqual(moved.stdout, "usr_admin\n")
        XCTAssertTrue(moved.stderr.hasPrefix("hubscript: moved the stored session of 'me' from \(file.path) into the vault (sessions/me) and deleted the file\n"), moved.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file.path))
        let again = try cli.run([recipe, "--config", config], expect: 0)
        XCTAssertFalse(again.stderr.contains("moved"), again.stderr)
        let token = try storedRefreshToken(vault)
        XCTAssertEqual(filesContaining(token, under: cli.stateDir), [], "the refresh token is in no plain file")

        // Logout and login with the vault.
        XCTAssertEqual(try cli.run(["logout", "--config", config], expect: 0).stdout, "Signed out of 'me'.\n")
        XCTAssertThrowsError(try vault.value("sessions/me")) { error in
            XCTAssertEqual((error as? VaultError)?.code, .notFound, "\(error)")
            XCTAssertEqual((error as? VaultError)?.message, "no secret 'sessions/me' in the vault \(vault.folder.path)")
        }
        let second = try login(cli, config: config)
        XCTAssertEqual(second.status, 0, second.stderr)
        XCTAssertEqual(second.stderr, "")
        XCTAssertFalse(FileManager.default.fileExists(atPath: file.path))
        XCTAssertEqual(try cli.run([recipe, "--config", config], expect: 0).stdout, "usr_admin\n")
        let rotated = try storedRefreshToken(vault)
        XCTAssertNotEqual(rotated, token)
        XCTAssertEqual(filesContaining(rotated, under: cli.stateDir), [], "the refresh token is in no plain file")
        // Nor anywhere in the test's folder but the served Hub's own database (the server side).
        XCTAssertEqual(filesContaining(rotated, under: cli.root).filter { !$0.contains("/hub-state/") }, [])

        // The vault locked: a session profile says what to do, exit 2.
        cli.extraEnvironment["HUBSCRIPT_VAULT_KEY_FILE"] = nil
        let locked = try cli.run([recipe, "--config", config], expect: 2)
        XCTAssertTrue(locked.stderr.contains("vault_locked: Profile me keeps its session in the vault: the vault in \(vault.folder.path) is locked: set HUBSCRIPT_VAULT_KEY"), locked.stderr)
    }

    // MARK: Exports

    func testAVaultExportRoundTripsThroughGetObject() throws {
        let vault = try vaultCLI()
        let cli = vault.harness
        let recipe = try cli.file("export.lua", """
            recipe { name = "export" }
            local rows = {}
            for i = 1, 2000 do rows[i] = {id = i, email = "user" .. i .. "@example.com", note = "é ✓"} end
            export.jsonl("ada.jsonl", rows)
            export.jsonl("vault:audit/ada.jsonl", rows)
            export.csv("vault:audit/ada.csv", rows)
            """)
        let run = try cli.run([recipe], expect: 0)
        let id = try vault.open().objectID(named: "audit/ada.jsonl")
        let csvID = try vault.open().objectID(named: "audit/ada.csv")
        XCTAssertTrue(run.stderr.contains("exported vault:audit/ada.jsonl (\(id)) (2000 rows), vault:audit/ada.csv (\(csvID)) (2000 rows) to the vault\n"), run.stderr)
        let out = cli.root.appendingPathComponent("got.jsonl").path
        let got = try vault.run(["get-object", "audit/ada.jsonl", "--out", out, "--key-file", vault.keyFile])
        XCTAssertEqual(got.status, 0, got.stderr)
        let plain = try XCTUnwrap(FileManager.default.enumerator(atPath: cli.stateDir.appendingPathComponent("runs").path)?
            .compactMap { $0 as? String }.first { $0.hasSuffix("/ada.jsonl") })
        let expected = try Data(contentsOf: cli.stateDir.appendingPathComponent("runs").appendingPathComponent(plain))
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: out)), expected)
        XCTAssertGreaterThan(expected.count, 100_000)

        // A plan stores nothing in the vault.
        let before = try vault.open().list().map(\.name)
        let plan = try cli.run(["plan", recipe], expect: 0)
        XCTAssertTrue(plan.stderr.contains("exported vault:audit/ada.jsonl (not stored: plan) (2000 rows)"), plan.stderr)
        XCTAssertEqual(try vault.open().list().map(\.name), before)
        XCTAssertEqual(try vault.open().objectID(named: "audit/ada.jsonl"), id)
    }

    func testAVaultExportWithoutTheKeyFailsClearly() throws {
        let vault = try vaultCLI(unlocked: false)
        let recipe = try vault.harness.file("export.lua", """
            recipe { name = "export" }
            export.jsonl("vault:audit/ada.jsonl", {{a = 1}})
            """)
        let run = try vault.harness.run([recipe], expect: 1)
        XCTAssertTrue(run.stderr.contains("export.jsonl: cannot export vault:audit/ada.jsonl: the vault in \(vault.folder.path) is locked: set HUBSCRIPT_VAULT_KEY"), run.stderr)
    }

    func testSIGKILLDuringAVaultExportLeavesTheVaultReadable() throws {
        let vault = try vaultCLI()
        let cli = vault.harness
        XCTAssertEqual(try vault.run(["set", "keep/me", "--key-file", vault.keyFile], stdin: "kept\n").status, 0)
        let recipe = try cli.file("slow.lua", """
            recipe { name = "slow" }
            local i = 0
            export.jsonl("vault:audit/slow.jsonl", function()
              i = i + 1
              if i > 5000000 then return nil end
              return {i = i, pad = string.rep("x", 200)}
            end)
            """)
        let objects = vault.folder.appendingPathComponent("objects")
        for delay in [0.0, 0.3, 1.0] {
            let (process, stop) = try cli.startDrained([recipe])
            let deadline = Date().addingTimeInterval(30)
            // Wait until the object's temporary file has ciphertext in it, then a little more.
            while Date() < deadline, process.isRunning {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: objects.path)) ?? []
                let sizes = names.compactMap { try? FileManager.default.attributesOfItem(atPath: objects.appendingPathComponent($0).path)[.size] as? Int }
                if sizes.contains(where: { $0 > 64 << 10 }) { break }
                usleep(5_000)
            }
            XCTAssertTrue(process.isRunning, "the export should still be running")
            usleep(useconds_t(delay * 1_000_000))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            stop()
            XCTAssertEqual(process.terminationReason, .uncaughtSignal)
            let list = try vault.run(["list", "--key-file", vault.keyFile])
            XCTAssertEqual(list.status, 0, list.stderr)
            XCTAssertTrue(list.stdout.contains("keep/me"), list.stdout)
            XCTAssertFalse(list.stdout.contains("audit/slow.jsonl"), list.stdout)
            XCTAssertEqual(try vault.run(["verify", "--key-file", vault.keyFile]).status, 0)
            XCTAssertEqual(try vault.value("keep/me"), "kept")
        }
    }
}
