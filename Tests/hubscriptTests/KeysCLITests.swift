import Foundation
import XCTest

/// `hubscript keys show|list` against a served sandbox: the printed line, pasted into the
/// profile that uses the key, makes the gate work; each mistake says what to do.
final class KeysCLITests: XCTestCase {
    func testKeysShowPrintsTheLineThatMakesTheGateWork() throws {
        let lab = try GateLab(testCase: self)
        defer { lab.server.stop() }
        let profiles = """
            admin = { hub_url = "URL", email = "admin@example.com", rate_limit_per_minute = 0 },
            support = { hub_url = "URL", api_key = "satk_test_support_sandbox_00000000000000", rate_limit_per_minute = 0 },
            """
        let config = try lab.config(profiles)
        let notSignedIn = try lab.cli.run(["keys", "show", "key_ops", "--config", config, "--profile", "admin"])
        XCTAssertEqual(notSignedIn.status, 1, notSignedIn.output)
        XCTAssertTrue(notSignedIn.stderr.hasPrefix("hubscript keys show: "), notSignedIn.stderr)
        XCTAssertTrue(notSignedIn.stderr.contains("hubscript login --profile admin"), notSignedIn.stderr)
        // A profile whose key's record is read with that session: unknown until it signs in, and says so.
        let recorded = try lab.config(profiles + """
            ops = { hub_url = "URL", api_key = "\(GateCLITests.opsKey)", rate_limit_per_minute = 0, api_key_id = "key_ops", api_key_record_profile = "admin" },
            """)
        let unread = try lab.cli.run([GateCLITests.offboard, "--config", recorded, "--profile", "ops", "--param", "user=ada@example.com"])
        XCTAssertEqual(unread.status, 3, unread.output)
        XCTAssertEqual(unread.stderr, GateCLITests.denial("ops").replacingOccurrences(
            of: "nothing ran.\n",
            with: "nothing ran.\nThe profile's api_key_id did not give the key's permissions: reading the record of key_ops: session_ended (401): "
                + "The session of profile admin ended: no stored session. Run `hubscript login --profile admin` to sign in again.\n"))

        try lab.login(config, profile: "admin")
        let days = Self.utcDays()
        let shown = try lab.cli.run(["keys", "show", "key_ops", "--config", config, "--profile", "admin"], expect: 0)
        let line = #"api_key_permissions = { "audit.view", "entitlements.manage", "roles.manage", "users.list", "users.manage" },  -- key_ops (Operations), read "#
        XCTAssertTrue(days.map { line + $0 + "\n" }.contains(shown.stdout), shown.stdout)
        XCTAssertEqual(shown.stderr, "")

        let json = try lab.cli.json(["keys", "show", "key_support_ro", "--config", config, "--profile", "admin", "--json"])
        XCTAssertEqual(json["permissions"] as? [String], ["audit.view", "users.list"])
        XCTAssertEqual(json["name"] as? String, "Support read-only")
        XCTAssertEqual(json["status"] as? String, "active")

        // Pasted into the profile that uses the key, the line gates the run before it starts.
        let declared = try lab.config(#"ops = { hub_url = "URL", api_key = "\#(GateCLITests.opsKey)", rate_limit_per_minute = 0, "#
                                      + shown.stdout.replacingOccurrences(of: "\n", with: "\n }"))
        let before = try lab.adaState()
        let denied = try lab.cli.run([GateCLITests.offboard, "--config", declared, "--profile", "ops", "--param", "user=ada@example.com"])
        XCTAssertEqual(denied.status, 3, denied.output)
        XCTAssertEqual(denied.stderr, """
            error: capability denied: profile 'ops' uses an API key that lacks what the recipe needs: \
            api_keys.manage, organizations.manage; nothing ran.
            Its permissions are the profile's api_key_permissions: if the key was given them since, print the line again \
            (hubscript keys show KEY_ID --profile SESSION_PROFILE). Otherwise ask an administrator to give the key them, \
            or use a profile whose key holds them.

            """)
        XCTAssertEqual(try lab.adaState().events, before.events)

        // api_key_id read with the admin's session before each run: the same gate.
        let alsoDenied = try lab.cli.run([GateCLITests.offboard, "--config", recorded, "--profile", "ops", "--param", "user=ada@example.com"])
        XCTAssertEqual(alsoDenied.status, 3, alsoDenied.output)
        XCTAssertEqual(alsoDenied.stderr, """
            error: capability denied: profile 'ops' uses an API key that lacks what the recipe needs: \
            api_keys.manage, organizations.manage; nothing ran.
            Its permissions are those of its record (api_key_id): ask an administrator to give the key them, \
            or use a profile whose key holds them.

            """)

        let list = try lab.cli.run(["keys", "list", "--config", config, "--profile", "admin"], expect: 0)
        let rows = list.stdout.split(separator: "\n").map(String.init)
        XCTAssertTrue(rows.first?.hasPrefix("ID ") == true && rows.first?.hasSuffix("  STATUS  PERMISSIONS") == true, list.stdout)
        XCTAssertEqual(rows.first { $0.hasPrefix("key_ops ") }?.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " "),
                       "key_ops Operations active audit.view entitlements.manage roles.manage users.list users.manage")

        // Mistakes, each with what to do.
        let unknown = try lab.cli.run(["keys", "show", "key_nope", "--config", config, "--profile", "admin"])
        XCTAssertEqual(unknown.status, 1)
        XCTAssertEqual(unknown.stdout, "")
        XCTAssertEqual(unknown.stderr, "hubscript keys show: no API key 'key_nope' on the Hub of profile 'admin'; hubscript keys list --profile admin lists the keys it can see.\n")
        let forbidden = try lab.cli.run(["keys", "show", "key_ops", "--config", config, "--profile", "support"])
        XCTAssertEqual(forbidden.status, 3)
        XCTAssertEqual(forbidden.stderr, "hubscript keys show: profile 'support' may not read API key records (the Hub answered 403: it needs api_keys.manage). Use the profile of an administrator who holds it.\n")
        let badID = try lab.cli.run(["keys", "show", "ops\nkey", "--config", config, "--profile", "admin"])
        XCTAssertEqual(badID.status, 2)
        XCTAssertEqual(badID.stderr, "hubscript keys show: 'ops\\nkey' is not an API key id (key_ followed by letters, digits, _ or -)\nRun 'hubscript keys show --help' for usage.\n")
        let revoke = try lab.cli.file("revoke.lua", """
            recipe { name = "revoke", needs = { "api_keys.manage" } }
            hub.api_keys.revoke("key_ada_cli")
            """)
        try lab.cli.run([revoke, "--config", config, "--profile", "admin"], expect: 0)
        let revoked = try lab.cli.run(["keys", "show", "key_ada_cli", "--config", config, "--profile", "admin"])
        XCTAssertEqual(revoked.status, 1)
        XCTAssertTrue(revoked.stderr.hasPrefix("hubscript keys show: API key key_ada_cli (Ada's CLI) is revoked since 20"), revoked.stderr)
        XCTAssertTrue(revoked.stderr.hasSuffix(": it can do nothing, so there is nothing to declare. Give the profile a live key.\n"), revoked.stderr)
    }

    /// Today and tomorrow in UTC (`2026-12-02`): the date `keys show` stamps, whichever
    /// side of midnight it ran.
    static func utcDays() -> [String] {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        let now = Date()
        return [formatter.string(from: now), formatter.string(from: now.addingTimeInterval(60))]
    }
}
