import Foundation
import XCTest

/// The gate through the built binary, against a served sandbox: an API key whose
/// permissions hubscript does not know never runs a recipe that writes (whichever way the
/// profile holds the key, and in run, plan, resume and jobs alike); a recipe that only
/// reads runs with a note; `gate = "hub"` runs and a 403 half-way leaves the run
/// resumable (`keys show`: KeysCLITests; triggers: ListenCLITests).
final class GateCLITests: XCTestCase {
    static let opsKey = "satk_test_ops_sandbox_000000000000000000"
    static let offboard = CLIHarness.repoRoot.appendingPathComponent("recipes/offboard.lua").path
    static let offboardWrites = "users.manage, entitlements.manage, roles.manage, api_keys.manage, organizations.manage"

    /// The denial of a recipe that writes, for `profile` (the run's stderr is `error: ` and this).
    static func denial(_ profile: String, writes: String = offboardWrites) -> String {
        """
        error: capability denied: profile '\(profile)' uses an API key whose permissions hubscript does not know, \
        and this recipe writes (it needs \(writes)); nothing ran.
        hubscript never assumes what a key may do. Say it in the profile '\(profile)', one of:
          api_key_permissions = { … }   the key's permissions; print the line from its record with a user session:
                                        hubscript keys show KEY_ID --profile SESSION_PROFILE
          api_key_id = "key_…", api_key_record_profile = "SESSION_PROFILE"
                                        read the key's record with that user session before each run
          gate = "hub"                  run without knowing them: the Hub's 403s are the only gate, so a run
                                        may stop half-way at a permission the key lacks (it can be resumed)

        """
    }

    // MARK: Unknown permissions

    func testOffboardWithAKeyOfUnknownPermissionsStopsBeforeAnythingWhereverTheKeyComesFrom() throws {
        let vault = try VaultCLI(testCase: self)
        try vault.initialise()
        let cli = vault.harness
        cli.extraEnvironment["HUBSCRIPT_VAULT_KEY_FILE"] = vault.keyFile
        cli.extraEnvironment["OPS_KEY"] = Self.opsKey
        XCTAssertEqual(try vault.run(["set", "hub/ops", "--key-file", vault.keyFile], stdin: Self.opsKey + "\n").status, 0)
        let hubState = cli.root.appendingPathComponent("hub-state")
        try cli.resetSandbox(state: hubState)
        let server = try ServedSandbox(cli, state: hubState, faults: "none")
        defer { server.stop() }
        let lab = GateLab(cli: cli, server: server, reader: try SandboxReader(served: server.url))
        let config = try lab.config("""
            literal = { hub_url = "URL", api_key = "\(Self.opsKey)", rate_limit_per_minute = 0 },
            env = { hub_url = "URL", api_key_env = "OPS_KEY", rate_limit_per_minute = 0 },
            vault = { hub_url = "URL", api_key_ref = "hub/ops", rate_limit_per_minute = 0 },
            unreadable = { hub_url = "URL", api_key = "\(Self.opsKey)", api_key_id = "key_jobs", rate_limit_per_minute = 0 },
            """)
        let before = try lab.adaState()
        XCTAssertEqual(before.status, "active")
        for profile in ["literal", "env", "vault"] {
            for command in [["run"], ["plan"]] {
                let r = try cli.run(command + [Self.offboard, "--config", config, "--profile", profile, "--param", "user=ada@example.com"])
                XCTAssertEqual(r.status, 3, "\(profile) \(command): \(r.output)")
                XCTAssertEqual(r.stdout, "")
                XCTAssertEqual(r.stderr, Self.denial(profile))
            }
        }
        // A key id whose record the key may not read: still unknown, and the Hub's answer says why.
        let unreadable = try cli.run([Self.offboard, "--config", config, "--profile", "unreadable", "--param", "user=ada@example.com"])
        XCTAssertEqual(unreadable.status, 3, unreadable.output)
        XCTAssertEqual(unreadable.stderr, Self.denial("unreadable").replacingOccurrences(
            of: "nothing ran.\n",
            with: "nothing ran.\nThe profile's api_key_id did not give the key's permissions: reading the record of key_jobs: forbidden (403): "
                + "This action requires the permission api_keys.manage.\n"))
        // Nothing was written, and nothing was journalled.
        let after = try lab.adaState()
        XCTAssertEqual(after.status, "active")
        XCTAssertEqual(after.events, before.events)
        XCTAssertEqual(after.entitlements, before.entitlements)
        XCTAssertEqual(try cli.run(["runs", "list"], expect: 0).stdout, "no runs yet\n")
    }

    func testARecipeThatOnlyReadsRunsWithANoteAndWritesNothing() throws {
        let lab = try GateLab(testCase: self)
        defer { lab.server.stop() }
        let config = try lab.config(#"ops = { hub_url = "URL", api_key = "\#(Self.opsKey)", rate_limit_per_minute = 0 }"#)
        let recipe = try lab.cli.file("who.lua", """
            recipe { name = "who", needs = { "users.list", "audit.view" } }
            print(hub.users.get("ada@example.com").status)
            """)
        let r = try lab.cli.run([recipe, "--config", config, "--profile", "ops"], expect: 0)
        XCTAssertEqual(r.stdout, "active\n")
        let lines = r.stderr.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 3, r.stderr)
        XCTAssertTrue(lines.first?.hasPrefix("run run_") == true, r.stderr)
        XCTAssertEqual(lines.dropFirst().first,
                       "warning: profile 'ops' does not say which permissions its API key holds; this recipe only reads "
                        + "(users.list, audit.view), so it ran and the Hub decided what it could read. A recipe that writes "
                        + "will not start until the profile declares them (api_key_permissions; hubscript keys show KEY_ID "
                        + "--profile SESSION_PROFILE prints the line) or sets gate = \"hub\".")
        XCTAssertTrue(lines.last?.hasPrefix("done: run run_") == true, r.stderr)
    }

    func testTheJSONErrorCarriesItsOwnCode() throws {
        let lab = try GateLab(testCase: self)
        defer { lab.server.stop() }
        let config = try lab.config(#"ops = { hub_url = "URL", api_key = "\#(Self.opsKey)", rate_limit_per_minute = 0 }"#)
        let r = try lab.cli.run([Self.offboard, "--config", config, "--profile", "ops", "--param", "user=ada@example.com", "--json"])
        XCTAssertEqual(r.status, 3, r.output)
        let events = r.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        XCTAssertEqual(events.map { $0["type"] as? String }, ["error", "summary"])
        let error = try XCTUnwrap(events.first?["error"] as? [String: Any])
        XCTAssertEqual(error["code"] as? String, "capabilities_unknown")
        XCTAssertEqual(error["profile"] as? String, "ops")
        XCTAssertEqual(error["missing"] as? [String], ["users.manage", "entitlements.manage", "roles.manage", "api_keys.manage", "organizations.manage"])
        XCTAssertEqual(events.last?["exit_code"] as? Int, 3)
    }

    func testAJobWithAKeyOfUnknownPermissionsDoesNotRun() throws {
        let lab = try GateLab(testCase: self)
        defer { lab.server.stop() }
        let config = try lab.config(#"ops = { hub_url = "URL", api_key = "\#(Self.opsKey)", rate_limit_per_minute = 0 }"#, extra: """
            jobs = { leaver = { recipe = "\(Self.offboard)", schedule = "@daily", profile = "ops", params = { user = "ada@example.com" } } }
            """)
        let before = try lab.adaState()
        let r = try lab.cli.run(["jobs", "run", "leaver", "--config", config])
        XCTAssertEqual(r.status, 3, r.output)
        XCTAssertTrue(r.output.contains(String(Self.denial("ops").dropFirst("error: ".count).dropLast())), r.output)
        XCTAssertEqual(try lab.adaState().events, before.events)
    }

    // MARK: gate = "hub"

    /// The issue's own case, opted in: the Hub's 403 at api_keys.manage stops the run
    /// after 9 writes; the message names the resume command, and once an administrator
    /// gives the key what it lacks, that command finishes the offboarding. Removing `gate = "hub"` puts the resume behind the gate again.
    func testGateHubRunsUntilTheHubRefusesAndTheRunResumes() throws {
        let lab = try GateLab(testCase: self)
        defer { lab.server.stop() }
        let profiles = """
            ops = { hub_url = "URL", api_key = "\(Self.opsKey)", rate_limit_per_minute = 0, gate = "hub" },
            admin = { hub_url = "URL", email = "admin@example.com", rate_limit_per_minute = 0 },
            """
        let config = try lab.config(profiles)
        let r = try lab.cli.run([Self.offboard, "--config", config, "--profile", "ops", "--param", "user=ada@example.com", "--run-id", "run_leaver"])
        XCTAssertEqual(r.status, 1, r.output)
        XCTAssertEqual(r.stdout, "")
        let lines = r.stderr.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.dropFirst().first, """
            error: \(Self.offboard):44: forbidden: the Hub refused hub.api_keys.list: This action requires the permission \
            api_keys.manage. (it needs api_keys.manage; this profile does not say which permissions its key holds, so the Hub \
            is the gate). The 9 writes made before it are journalled and will not be repeated; the run can be resumed once the \
            profile holds api_keys.manage: hubscript runs resume run_leaver
            """)
        XCTAssertEqual(try lab.cli.writeStates("run_leaver"), ["done": 9])
        XCTAssertEqual(try lab.adaState().status, "suspended")

        // Without gate = "hub", the resume is gated like any run.
        let strict = try lab.config(profiles.replacingOccurrences(of: #", gate = "hub""#, with: ""))
        let refused = try lab.cli.run(["runs", "resume", "run_leaver", "--config", strict])
        XCTAssertEqual(refused.status, 3, refused.output)
        XCTAssertEqual(refused.stderr, Self.denial("ops"))

        // An administrator gives the key what it lacks; the resume finishes the work.
        try lab.login(config, profile: "admin")
        let grant = try lab.cli.file("grant.lua", """
            recipe { name = "grant", needs = { "api_keys.manage" } }
            hub.api_keys.update("key_ops", { permissions = { "users.list", "users.manage", "entitlements.manage", "roles.manage",
              "audit.view", "api_keys.manage", "organizations.manage" } })
            """)
        try lab.cli.run([grant, "--config", config, "--profile", "admin"], expect: 0)
        let resumed = try lab.cli.run(["runs", "resume", "run_leaver", "--config", config], expect: 0)
        XCTAssertTrue(resumed.stderr.contains("done: run run_leaver — "), resumed.stderr)
        XCTAssertEqual(try lab.cli.writeStates("run_leaver")["failed"], nil)
        let keys = try lab.reader.all("/api-keys", "owner_user_id=usr_ada&include_inactive=true")
        XCTAssertEqual(keys.map { $0.string("status") }, keys.map { _ in "revoked" })
    }

}
