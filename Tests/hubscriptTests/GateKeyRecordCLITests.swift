import Foundation
import XCTest

/// `api_key_id` read with a user session, through the built binary: the record gates the
/// run only when it is the record of the key the profile sends. A profile whose
/// `api_key_id` names a more powerful key must not start a recipe its own key cannot
/// finish (the half-offboarded user the gate exists to prevent).
final class GateKeyRecordCLITests: XCTestCase {
    func testAnotherKeysRecordNeverLendsItsPermissions() throws {
        let lab = try GateLab(testCase: self)
        defer { lab.server.stop() }
        let config = try lab.config("""
            admin = { hub_url = "URL", email = "admin@example.com", rate_limit_per_minute = 0 },
            ops = { hub_url = "URL", api_key = "\(GateCLITests.opsKey)", rate_limit_per_minute = 0, api_key_id = "key_jobs", api_key_record_profile = "admin" },
            selfread = { hub_url = "URL", api_key = "satk_test_jobs_sandbox_0000000000000000", rate_limit_per_minute = 0, api_key_id = "key_ops" },
            """)
        try lab.login(config, profile: "admin")
        let before = try lab.adaState()
        for command in [["run"], ["plan"]] {
            let r = try lab.cli.run(command + [GateCLITests.offboard, "--config", config, "--profile", "ops", "--param", "user=ada@example.com"])
            XCTAssertEqual(r.status, 3, "\(command): \(r.output)")
            XCTAssertEqual(r.stdout, "")
            XCTAssertEqual(r.stderr, GateCLITests.denial("ops").replacingOccurrences(
                of: "nothing ran.\n",
                with: "nothing ran.\nThe profile's api_key_id did not give the key's permissions: the record of key_jobs is another "
                    + "key's (its prefix does not begin the key this profile sends): api_key_id must name the profile's own key.\n"))
        }
        // A key that may read key records (key_jobs holds api_keys.manage) reading another's: the same.
        let selfRead = try lab.cli.run([GateCLITests.offboard, "--config", config, "--profile", "selfread", "--param", "user=ada@example.com"])
        XCTAssertEqual(selfRead.status, 3, selfRead.output)
        XCTAssertTrue(selfRead.stderr.contains("The profile's api_key_id did not give the key's permissions: the record of key_ops is another key's"),
                      selfRead.stderr)
        let json = try lab.cli.run([GateCLITests.offboard, "--config", config, "--profile", "ops", "--param", "user=ada@example.com", "--json"])
        XCTAssertEqual(json.status, 3, json.output)
        let events = json.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        XCTAssertEqual((events.first?["error"] as? [String: Any])?["code"] as? String, "capabilities_unknown", json.stdout)
        // Nothing was written, and nothing was journalled.
        let after = try lab.adaState()
        XCTAssertEqual(after.status, "active")
        XCTAssertEqual(after.events, before.events)
        XCTAssertEqual(after.entitlements, before.entitlements)
        XCTAssertEqual(try lab.cli.run(["runs", "list"], expect: 0).stdout, "no runs yet\n")
    }

    /// A key whose record says it is revoked can do nothing: the run does not start (no
    /// journalled run to resume), and the message says to give the profile a live key.
    func testARevokedKeysRecordStopsEveryRecipeBeforeItStarts() throws {
        let lab = try GateLab(testCase: self)
        defer { lab.server.stop() }
        let config = try lab.config("""
            admin = { hub_url = "URL", email = "admin@example.com", rate_limit_per_minute = 0 },
            ada = { hub_url = "URL", api_key = "satk_test_ada_sandbox_000000000000000000", rate_limit_per_minute = 0, api_key_id = "key_ada_cli", api_key_record_profile = "admin" },
            """)
        try lab.login(config, profile: "admin")
        let revoke = try lab.cli.file("revoke.lua", """
            recipe { name = "revoke", needs = { "api_keys.manage" } }
            hub.api_keys.revoke("key_ada_cli")
            """)
        _ = try lab.cli.run([revoke, "--config", config, "--profile", "admin"], expect: 0)
        let reads = try lab.cli.file("reads.lua", """
            recipe { name = "reads", needs = { "users.list" } }
            print(hub.users.get("usr_ada").status)
            """)
        let runsBefore = try lab.cli.run(["runs", "list", "--config", config], expect: 0).stdout
        let r = try lab.cli.run([reads, "--config", config, "--profile", "ada"])
        XCTAssertEqual(r.status, 3, r.output)
        XCTAssertEqual(r.stdout, "")
        XCTAssertEqual(r.stderr, """
            error: capability denied: profile 'ada' uses the API key key_ada_cli, whose record says it is revoked: \
            it can do nothing; nothing ran.
            Give the profile a live key (hubscript keys list --profile SESSION_PROFILE --all shows each key's status).

            """)
        let json = try lab.cli.run([reads, "--config", config, "--profile", "ada", "--json"])
        XCTAssertEqual(json.status, 3, json.output)
        let events = json.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        XCTAssertEqual((events.first?["error"] as? [String: Any])?["code"] as? String, "api_key_inactive", json.stdout)
        XCTAssertEqual(try lab.cli.run(["runs", "list", "--config", config], expect: 0).stdout, runsBefore)
    }
}
