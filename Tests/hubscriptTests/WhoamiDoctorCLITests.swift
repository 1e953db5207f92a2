import Foundation
import XCTest
import TestSupport

/// `hubscript whoami` says who a profile is at its Hub, what it may do, the rate limit
/// the Hub reported and where the credential comes from, never the secret;
/// `hubscript doctor` checks the configuration, profiles, vault, journal, Hub and
/// Dispatch, one line each, and exits 1 when one is wrong.
final class WhoamiDoctorCLITests: XCTestCase {
    static let jobsKey = "satk_test_jobs_sandbox_0000000000000000"

    func paths(_ text: String, _ cli: CLIHarness) -> String {
        text.replacingOccurrences(of: cli.root.path, with: "ROOT")
    }

    func testWhoamiOnTheBuiltInSandbox() throws {
        let cli = try CLIHarness(testCase: self)
        let r = try cli.run(["whoami"])
        XCTAssertEqual(paths(r.stdout, cli), """
            profile     sandbox
            hub         the built-in sandbox in ROOT/state/sandbox/hub.sqlite (API version 1)
            who         API key key_jobs "Scheduled jobs", owned by usr_admin, active
            may         api_keys.manage, applications.manage, audit.view, billing.manage, entitlements.manage, notifications.send, \
            organizations.manage, roles.manage, tenants.manage, users.list, users.manage, webhooks.manage (the key's record)
            rate limit  none reported by the Hub's answers; no pacing of its own
            credential  the built-in sandbox's published test key
            dispatch    token from the built-in sandbox's machine token

            """)
        XCTAssertEqual(r.stderr, "")
        XCTAssertEqual(r.status, 0)
        XCTAssertFalse(r.stdout.contains(Self.jobsKey))

        let json = try cli.json(["whoami", "--json"])
        XCTAssertEqual(json["profile"] as? String, "sandbox")
        XCTAssertEqual(json["api_version"] as? String, "1")
        XCTAssertEqual((json["who"] as? [String: Any])?["kind"] as? String, "api_key")
        XCTAssertEqual((json["who"] as? [String: Any])?["owner"] as? String, "usr_admin")
        XCTAssertEqual(json["permissions_source"] as? String, "api_key_record")
        XCTAssertEqual((json["credential"] as? [String: Any])?["source"] as? String, "builtin_sandbox")
        XCTAssertTrue(json["rate_limit"] is NSNull)
    }

    func testWhoamiOfAUserSessionAndOfAKeyOnAServedSandboxWithRateLimits() throws {
        let cli = try CLIHarness(testCase: self)
        let hubState = cli.root.appendingPathComponent("hub-state")
        try cli.resetSandbox(state: hubState)
        let served = try ServedSandbox(cli, state: hubState, faults: "none", rateLimits: "standard")
        defer { served.stop() }
        let config = try cli.file("who.config.lua", """
            return { profiles = {
              me = { hub_url = "\(served.url)", email = "ada@example.com", rate_limit_per_minute = 0 },
              support = { hub_url = "\(served.url)", api_key_env = "SUPPORT_KEY", api_key_id = "key_support_ro", rate_limit_per_minute = 50 },
              blind = { hub_url = "\(served.url)", api_key_env = "SUPPORT_KEY" },
            } }
            """)
        cli.extraEnvironment = ["SUPPORT_KEY": "satk_test_support_sandbox_00000000000000"]
        let login = try cli.run(["login", "--config", config, "--profile", "me", "--password-stdin", "--mfa-code", "123456"],
                                input: "any password\n")
        XCTAssertEqual(login.status, 0, login.output)

        let me = try cli.run(["whoami", "--config", config, "--profile", "me"])
        let lines = me.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 7, me.stdout)
        XCTAssertEqual(Array(lines.prefix(5)), [
            "profile     me",
            "hub         \(served.url) (API version 1)",
            "who         user usr_ada <ada@example.com> \"Ada Lovelace\", active",
            "roles       role_billing_admin, role_member",
            "may         billing.manage, users.list (the user's Capabilities)",
        ])
        XCTAssertTrue(lines[5].hasPrefix("rate limit  100 a minute, "), lines[5])
        XCTAssertTrue(lines[5].hasSuffix(" (the Hub's last answer); no pacing of its own"), lines[5])
        XCTAssertEqual(lines[6], "credential  the login session of ada@example.com (hubscript login)")
        XCTAssertEqual(me.status, 0, me.stderr)

        let key = try cli.run(["whoami", "--config", config, "--profile", "support"])
        XCTAssertTrue(key.stdout.contains("who         API key key_support_ro \"Support read-only\", owned by "), key.stdout)
        XCTAssertTrue(key.stdout.contains("may         audit.view, users.list (the key's record)\n"), key.stdout)
        XCTAssertTrue(key.stdout.contains("; the profile paces at 50 a minute\n"), key.stdout)
        XCTAssertTrue(key.stdout.hasSuffix("credential  the environment variable $SUPPORT_KEY (api_key_env)\n"), key.stdout)
        XCTAssertFalse(key.output.contains("satk_test_support"), key.output)
        XCTAssertEqual(key.status, 0)

        // A key whose permissions the profile does not say: whoami says how to say them.
        let blind = try cli.run(["whoami", "--config", config, "--profile", "blind"])
        XCTAssertTrue(blind.stdout.contains("who         API key (its id is not in the profile: set api_key_id to read its record)\n"
                                            + "may         not known: declare them in the profile (api_key_permissions; hubscript keys show "
                                            + "KEY_ID prints the line), or name the key with api_key_id to read its record\n"), blind.stdout)
        XCTAssertEqual(blind.status, 0)

        // Signed out: the session is over, and whoami says to sign in.
        _ = try cli.run(["logout", "--config", config, "--profile", "me"], expect: 0)
        let out = try cli.run(["whoami", "--config", config, "--profile", "me"])
        XCTAssertEqual(out.stdout, "")
        XCTAssertTrue(out.stderr.hasSuffix("hubscript whoami: profile 'me': its login session has ended or was never started "
                                           + "(\(served.url): The session of profile me ended: no stored session); "
                                           + "sign in again: hubscript login --profile me\n"), out.stderr)
        XCTAssertEqual(out.status, 3)
    }

    func testDoctorOnTheBuiltInSandboxIsAllOK() throws {
        let cli = try CLIHarness(testCase: self)
        let r = try cli.run(["doctor"])
        let stable = paths(r.stdout, cli).replacingOccurrences(of: #"answered in [0-9]+ ms"#, with: "answered in N ms",
                                                                options: .regularExpression)
        XCTAssertEqual(stable, """
            ok    config: no configuration file found; the built-in sandbox is used (README, "Profiles")
            ok    profile 'sandbox': resolves; credential from the built-in sandbox's published test key
            ok    vault: none at ROOT/state/vault (no profile needs one)
            ok    journal: ROOT/state/journal/journal.sqlite (quick check ok, schema 11)
            ok    hub 'sandbox': the built-in sandbox answered in N ms; accepts the credential (API key key_jobs)
            ok    clock 'sandbox': not measured: the Hub's answers carry no Date header
            ok    dispatch 'sandbox': the built-in sandbox Dispatch (in process)

            """)
        XCTAssertEqual(r.stderr, "doctor: all 7 checks ok\n")
        XCTAssertEqual(r.status, 0)

        let json = try cli.json(["doctor", "--json"])
        XCTAssertEqual(json["ok"] as? Bool, true)
        XCTAssertEqual((json["checks"] as? [[String: Any]])?.map { $0["name"] as? String ?? "" },
                       ["config", "profile 'sandbox'", "vault", "journal", "hub 'sandbox'", "clock 'sandbox'", "dispatch 'sandbox'"])
    }

    func testDoctorSaysWhatIsWrongAndWhatToDo() throws {
        let cli = try CLIHarness(testCase: self)
        let port = try TinyProxy.freePort()
        let config = try cli.file("bad.config.lua", """
            return { profiles = {
              vaulted = { sandbox = true },
              keyed = { hub_url = "http://127.0.0.1:\(port)", api_key_ref = "hub/keyed", api_key_permissions = { "users.list" },
                        dispatch_url = "http://127.0.0.1:\(port)", dispatch_token_ref = "env:DISPATCH_TOKEN" },
            } }
            """)
        // A journal that is not a database.
        let journal = cli.stateDir.appendingPathComponent("journal")
        try FileManager.default.createDirectory(at: journal, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: cli.stateDir.path)
        try Data("not a journal at all, just some text to fill a page".utf8).write(to: journal.appendingPathComponent("journal.sqlite"))
        let r = try cli.run(["doctor", "--config", config])
        let out = paths(r.stdout, cli)
        XCTAssertTrue(out.contains("FAIL  profile 'keyed': vault_not_open: Profile keyed reads its API key from the vault entry 'hub/keyed': "
                                   + "no vault in ROOT/state/vault: create one with `hubscript vault init`"), out)
        XCTAssertTrue(out.contains("FAIL  vault: no vault at ROOT/state/vault, and profile 'keyed' (api_key_ref hub/keyed) reads from it; "
                                   + "make one: hubscript vault init, then hubscript vault set NAME\n"), out)
        XCTAssertTrue(out.contains("FAIL  journal: the journal ROOT/state/journal/journal.sqlite is damaged (SQLite: file is not a database)"),
                      out)
        XCTAssertTrue(out.contains("ok    profile 'vaulted': resolves; credential from the built-in sandbox's published test key\n"), out)
        XCTAssertTrue(out.hasPrefix("ok    config: ROOT/bad.config.lua (trusted: yours or root's, writable by nobody else)\n"), out)
        XCTAssertEqual(r.stderr, "doctor: 3 of 8 checks failed\n")
        XCTAssertEqual(r.status, 1)

        // A Dispatch that is not there (a profile that resolves).
        let dispatchConfig = try cli.file("dispatch.config.lua", """
            return { profiles = { paged = { hub_url = "http://127.0.0.1:\(port)", api_key_env = "HUB_KEY",
                                            dispatch_url = "http://127.0.0.1:\(port)", dispatch_token_ref = "env:DISPATCH_TOKEN" } } }
            """)
        cli.extraEnvironment = ["HUB_KEY": Self.jobsKey, "http_proxy": "", "all_proxy": "", "ALL_PROXY": ""]
        let d = try cli.run(["doctor", "--config", dispatchConfig, "--profile", "paged"])
        XCTAssertTrue(d.stdout.contains("FAIL  hub 'paged': nothing accepts connections at http://127.0.0.1:\(port) "), d.stdout)
        XCTAssertTrue(d.stdout.contains("FAIL  dispatch 'paged': http://127.0.0.1:\(port): cannot connect to 127.0.0.1:\(port): "
                                        + "Connection refused (errno 111); check that Dispatch is running there and the URL in the configuration\n"),
                      d.stdout)
        XCTAssertEqual(d.status, 1)
        XCTAssertFalse(d.output.contains(Self.jobsKey))
    }

    func testDoctorOpensTheVaultWithTheKeyFromTheEnvironment() throws {
        let vault = try VaultCLI(testCase: self)
        try vault.initialise()
        let cli = vault.harness
        let config = try cli.file("v.config.lua", """
            return { profiles = { dev = { sandbox = true },
                                  keyed = { hub_url = "http://127.0.0.1:9", api_key_ref = "hub/keyed" } } }
            """)
        // Locked, and needed by a profile: both lines say so.
        var r = try cli.run(["doctor", "--config", config])
        XCTAssertTrue(r.stdout.contains("FAIL  profile 'keyed': vault_locked: "), r.stdout)
        XCTAssertTrue(paths(r.stdout, cli).contains("FAIL  vault: ROOT/state/vault: vault_locked: "), r.stdout)
        XCTAssertEqual(r.status, 1)
        // Locked, and needed by no profile: ok, saying what a recipe's secrets need.
        r = try cli.run(["doctor", "--config", config, "--profile", "dev"])
        XCTAssertTrue(paths(r.stdout, cli).contains("ok    vault: ROOT/state/vault exists, locked (no key in the environment); "
                                                    + "no profile needs it"), r.stdout)
        XCTAssertEqual(r.status, 0, r.stdout)
        // With the key: it opens.
        cli.extraEnvironment = ["HUBSCRIPT_VAULT_KEY_FILE": vault.keyFile]
        r = try cli.run(["doctor", "--config", config, "--profile", "dev"])
        XCTAssertTrue(paths(r.stdout, cli).contains("ok    vault: ROOT/state/vault opens (0 entries)\n"), r.stdout)
        XCTAssertEqual(r.status, 0, r.stdout)
    }

    func testDoctorReportsAConfigurationOthersCanChange() throws {
        let cli = try CLIHarness(testCase: self)
        let config = try cli.file("open.config.lua", "return { profiles = { dev = { sandbox = true } } }")
        try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: config)
        let r = try cli.run(["doctor", "--config", config])
        XCTAssertEqual(paths(r.stdout, cli), "FAIL  config: config ROOT/open.config.lua: is writable by its group and others (mode 0666); "
                       + "hubscript reads only a configuration that nobody but you (or root) can change, since it decides where your "
                       + "credentials are sent. Fix: chmod go-w ROOT/open.config.lua\n")
        XCTAssertEqual(r.status, 1)
        let bad = try cli.run(["doctor", "--timeout", "0"])
        XCTAssertEqual(bad.status, 2)
        XCTAssertTrue(bad.stderr.hasPrefix("hubscript doctor: --timeout must be a number of seconds from 1 to 600, got '0'\n"), bad.stderr)
    }
}

/// `hubscript doctor` on a PostgreSQL journal: it connects and has this hubscript's
/// schema, or the line says why not, with no password shown.
final class DoctorPostgresCLITests: XCTestCase {
    func testDoctorConnectsToThePostgreSQLJournalOrSaysWhyNot() throws {
        let journal = try TestPostgres.freshSchemaURL(TestPostgres.requiredBaseURL())
        let cli = try CLIHarness(testCase: self)
        let config = try cli.file("pg.config.lua", #"return { profiles = { dev = { sandbox = true } }, journal = "\#(journal)" }"#)
        let r = try cli.run(["doctor", "--config", config])
        let line = try XCTUnwrap(r.stdout.split(separator: "\n").first { $0.contains("journal: ") }, r.stdout)
        XCTAssertTrue(line.hasPrefix("ok    journal: postgresql://"), String(line))
        XCTAssertTrue(line.hasSuffix(" (connects, schema 11)"), String(line))
        XCTAssertEqual(r.status, 0, r.output)

        let empty = cli.root.appendingPathComponent("no-server").path
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let down = try cli.file("down.config.lua",
                                #"return { profiles = { dev = { sandbox = true } }, journal = "postgres://ops:not-the-password@/hubscript?host=\#(empty)" }"#)
        let d = try cli.run(["doctor", "--config", down])
        XCTAssertTrue(d.stdout.contains("FAIL  journal: the PostgreSQL journal is out of reach: cannot connect to "
                                        + "postgres://ops:***@/hubscript?host=\(empty): "), d.stdout)
        XCTAssertFalse(d.output.contains("not-the-password"), d.output)
        XCTAssertEqual(d.status, 1)
    }
}
