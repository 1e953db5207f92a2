import Foundation
import HubClient
import XCTest
import Configuration

/// The profile keys that say how an API key's permissions are known: `api_key_permissions`
/// (checked against the catalogue), `api_key_id` with `api_key_record_profile`, and
/// `gate = "hub"` — each refused with the exact reason when it cannot mean anything.
final class GateConfigTests: XCTestCase {
    var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("hubscript-gate-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    func load(_ profiles: String) throws -> HubConfig {
        let url = folder.appendingPathComponent("c.lua")
        try "return { profiles = { \(profiles) } }".write(to: url, atomically: true, encoding: .utf8)
        return try LoadedConfiguration.load(explicit: url.path).hub
    }

    func hubProfile(_ config: HubConfig, _ name: String) throws -> HubProfile {
        guard case .hub(let profile) = try config.profile(named: name).setting else { throw XCTSkip("\(name) is not a hub profile") }
        return profile
    }

    func testGateHubRecordProfileAndAnEmptyDeclarationParse() throws {
        let config = try load("""
            ops = { hub_url = "https://h", api_key_env = "OPS_KEY", gate = "hub" },
            ci = { hub_url = "https://h", api_key = "satk_x", api_key_id = "key_ci", api_key_record_profile = "admin" },
            none = { hub_url = "https://h", api_key_ref = "hub/none", api_key_permissions = {} },
            strict = { hub_url = "https://h", api_key_ref = "hub/strict", gate = "capabilities" },
            admin = { hub_url = "https://h/", email = "admin@example.com" },
            ci2 = { hub_url = "HTTPS://H:443", api_prefix = "v1", api_key = "satk_x", api_key_id = "key_ci", api_key_record_profile = "admin2" },
            admin2 = { hub_url = "https://h/", api_prefix = "/v1/", email = "admin@example.com" },
            """)
        let ops = try hubProfile(config, "ops")
        XCTAssertTrue(ops.hubIsOnlyGate)
        XCTAssertNil(ops.apiKeyPermissions)
        let ci = try hubProfile(config, "ci")
        XCTAssertEqual(ci.apiKeyID, "key_ci")
        XCTAssertEqual(ci.apiKeyRecordProfile, "admin")
        XCTAssertFalse(ci.hubIsOnlyGate)
        XCTAssertEqual(try hubProfile(config, "none").apiKeyPermissions, [])
        XCTAssertFalse(try hubProfile(config, "strict").hubIsOnlyGate)
    }

    func testMistakesAreRefusedWithTheReason() throws {
        let known = Capabilities.allPermissions.joined(separator: ", ")
        let cases: [(String, String)] = [
            (#"p = { hub_url = "https://h", api_key = "k", api_key_permissions = { "users.mange" } }"#,
             "profiles.p.api_key_permissions: unknown permission 'users.mange' (did you mean 'users.manage'?) (known permissions: \(known))"),
            (#"p = { hub_url = "https://h", api_key = "k", api_key_permissions = "users.list" }"#,
             "profiles.p.api_key_permissions must be a list of permission keys, e.g. { \"users.list\", \"users.manage\" } (hubscript keys show KEY_ID --profile SESSION_PROFILE prints the line)"),
            (#"p = { hub_url = "https://h", api_key = "k", api_key_permissions = { users = "list" } }"#,
             "profiles.p.api_key_permissions must be a list of permission keys, e.g. { \"users.list\", \"users.manage\" } (hubscript keys show KEY_ID --profile SESSION_PROFILE prints the line)"),
            (#"p = { hub_url = "https://h", api_key = "k", api_key_id = "../roles/role_superadmin" }"#,
             "profiles.p.api_key_id must be an API key id such as \"key_ops\" (key_ and letters, digits, _ or -)"),
            (#"p = { hub_url = "https://h", api_key = "k", api_key_id = "key_" }"#,
             "profiles.p.api_key_id must be an API key id such as \"key_ops\" (key_ and letters, digits, _ or -)"),
            (#"p = { hub_url = "https://h", api_key = "k", api_key_id = "key_a/b" }"#,
             "profiles.p.api_key_id must be an API key id such as \"key_ops\" (key_ and letters, digits, _ or -)"),
            (#"p = { hub_url = "https://h", api_key = "k", gate = "none" }"#,
             "profiles.p.gate must be \"capabilities\" (the default: a recipe that writes needs the key's permissions known) or \"hub\" (the Hub's 403s are the only gate)"),
            (#"p = { hub_url = "https://h", api_key = "k", gate = true }"#,
             "profiles.p.gate must be \"capabilities\" (the default: a recipe that writes needs the key's permissions known) or \"hub\" (the Hub's 403s are the only gate)"),
            (#"p = { hub_url = "https://h", api_key = "k", gate = "hub", api_key_permissions = { "users.list" } }"#,
             "profiles.p declares api_key_permissions and gate = \"hub\": the declared permissions gate the run; remove one"),
            (#"p = { hub_url = "https://h", email = "me@x", gate = "hub" }"#,
             "profiles.p.gate applies to an API key profile; this profile signs in as a user (email), whose permissions the Hub tells"),
            (#"p = { hub_url = "https://h", email = "me@x", api_key_permissions = { "users.list" } }"#,
             "profiles.p.api_key_permissions applies to an API key profile; this profile signs in as a user (email), whose permissions the Hub tells"),
            (#"p = { hub_url = "https://h", api_key = "k", api_key_record_profile = "admin" }"#,
             "profiles.p.api_key_record_profile reads the record of the key api_key_id names; set api_key_id = \"key_…\" too"),
            (#"p = { hub_url = "https://h", api_key = "k", api_key_id = "key_p", api_key_record_profile = "admin" }"#,
             "profiles.p.api_key_record_profile = \"admin\" must name a profile of this file that signs in as a user (email = …); the Hub shows a key's record only to a user session"),
            (#"p = { hub_url = "https://h", api_key = "k", api_key_id = "key_p", api_key_record_profile = "q" }, q = { hub_url = "https://h", api_key = "k2", gate = "hub" }"#,
             "profiles.p.api_key_record_profile = \"q\" must name a profile of this file that signs in as a user (email = …); the Hub shows a key's record only to a user session"),
            (#"p = { hub_url = "https://h", api_key = "k", api_key_id = "key_p", api_key_record_profile = "q" }, q = { hub_url = "https://other", email = "me@x" }"#,
             "profiles.p.api_key_record_profile = \"q\" signs in to https://other, not to this profile's Hub (https://h): a key's record is read on the key's own Hub"),
            (#"p = { hub_url = "https://h", api_prefix = "/v1", api_key = "k", api_key_id = "key_p", api_key_record_profile = "q" }, q = { hub_url = "https://h", email = "me@x" }"#,
             "profiles.p.api_key_record_profile = \"q\" signs in to https://h, not to this profile's Hub (https://h/v1): a key's record is read on the key's own Hub"),
        ]
        for (text, message) in cases {
            XCTAssertThrowsError(try load(text), text) { error in
                XCTAssertEqual("\(error)", "config \(self.folder.appendingPathComponent("c.lua").path): \(message)")
            }
        }
    }
}
