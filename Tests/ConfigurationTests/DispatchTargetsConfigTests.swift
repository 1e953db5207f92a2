import Foundation
import HubClient
import XCTest
import Configuration
import RecipeModules

/// `dispatch_targets`: the configuration binds each Dispatch credential to its URL, and
/// refuses as a Dispatch credential anything that is not one.
final class DispatchTargetsConfigTests: XCTestCase {
    var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("hubscript-targets-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // The recipe a trigger below names: the whole file is validated.
        try #"recipe { name = "r", params = { event = { type = "table" } } }"#.write(
            to: folder.appendingPathComponent("r.lua"), atomically: true, encoding: .utf8)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    func load(_ text: String) throws -> HubConfig {
        let url = folder.appendingPathComponent("config-\(UUID().uuidString).lua")
        try text.write(to: url, atomically: true, encoding: .utf8)
        return try LoadedConfiguration.load(explicit: url.path).hub
    }

    func refusal(_ text: String) -> String? {
        do { _ = try load(text); return nil } catch {
            let message = "\(error)"
            guard let colon = message.range(of: ".lua: ") else { return message }
            return String(message[colon.upperBound...])
        }
    }

    static let profile = #"prod = { hub_url = "https://hub.example.com", api_key_ref = "hub/prod-key""#

    func testTargetsAtTheTopAndInAProfileTheProfilesWinByName() throws {
        let config = try load("""
            return {
              dispatch_targets = {
                ops = { url = "https://dispatch.example.com", token_ref = "dispatch/ops" },
                pager = { url = "http://127.0.0.1:8471", token_ref = "env:PAGER_TOKEN" },
              },
              profiles = {
                \(Self.profile), dispatch_targets = { ops = { url = "https://ops.example.com", token_ref = "dispatch/prod-ops" } } },
                dev = { sandbox = true },
              },
            }
            """)
        XCTAssertEqual(config.dispatchTargets.keys.sorted(), ["ops", "pager"])
        let prod = config.dispatchTargets(profile: "prod")
        XCTAssertEqual(prod["ops"], DispatchTargetSetting(url: URL(string: "https://ops.example.com")!, tokenRef: "dispatch/prod-ops"))
        XCTAssertEqual(prod["pager"], DispatchTargetSetting(url: URL(string: "http://127.0.0.1:8471")!, tokenRef: "env:PAGER_TOKEN"))
        XCTAssertEqual(config.dispatchTargets(profile: "dev")["ops"]?.tokenRef, "dispatch/ops")
        // Under a sandbox profile every target is the sandbox Dispatch: trying a recipe notifies nobody.
        let opener: DispatchTarget.SandboxDispatchOpener = { throw CancellationError() }
        guard case .sandbox = DispatchTarget.named("ops", profile: "dev", in: config, sandbox: opener).endpoint else {
            return XCTFail("a sandbox profile's target is the sandbox Dispatch")
        }
        guard case .server(let url, let ref) = DispatchTarget.named("ops", profile: "prod", in: config, sandbox: opener).endpoint else {
            return XCTFail("a Hub profile's target is its configured server")
        }
        XCTAssertEqual([url.absoluteString, ref], ["https://ops.example.com", "dispatch/prod-ops"])
        guard case .unconfigured(let reason) = DispatchTarget.named("oncall", profile: "prod", in: config, sandbox: opener).endpoint else {
            return XCTFail("an undefined target is unconfigured")
        }
        XCTAssertTrue(reason.hasSuffix("defines no Dispatch target 'oncall' for profile 'prod' (targets: ops, pager): add dispatch_targets = { oncall = { url = \"https://…\", token_ref = \"dispatch/oncall\" } } at its top level or in the profile"), reason)
    }

    /// A URL's user name, password, query or fragment would be shown wherever the URL is
    /// (describe, errors, a recipe's `conn.url`) and sent along: a credential never rides
    /// in a Dispatch URL, and the refusal never repeats it.
    func testADispatchURLCarriesNoCredentialAndTheRefusalDoesNotShowIt() {
        let expected = "refusing the Dispatch URL https://d.example.com/relay: a Dispatch URL holds no user name, password, query or fragment, which describe, errors and recipes (conn.url) would show; give the server's base URL and keep its credential in a vault entry named by token_ref"
        for url in ["https://ops:Hunter2pw@d.example.com/relay", "https://Hunter2pw@d.example.com/relay",
                    "https://d.example.com/relay?token=Hunter2pw", "https://d.example.com/relay#Hunter2pw",
                    "https://ops:Hunter2pw@d.example.com/relay?token=Hunter2pw#Hunter2pw"] {
            let target = refusal(#"return { dispatch_targets = { ops = { url = "\#(url)", token_ref = "dispatch/ops" } } }"#)
            XCTAssertEqual(target, "dispatch_targets.ops.url: " + expected, url)
            let inProfile = refusal(#"return { profiles = { \#(Self.profile), dispatch_targets = { ops = { url = "\#(url)", token_ref = "dispatch/ops" } } } } }"#)
            XCTAssertEqual(inProfile, "profiles.prod.dispatch_targets.ops.url: " + expected, url)
            let dispatchURL = refusal(#"return { profiles = { \#(Self.profile), dispatch_url = "\#(url)", dispatch_token_ref = "dispatch/ci" } } }"#)
            XCTAssertEqual(dispatchURL, "profiles.prod.dispatch_url: " + expected, url)
        }
    }

    func testMistakesInATargetNameTheKey() {
        let cases: [(String, String)] = [
            (#"return { dispatch_targets = { ops = { url = "https://d.example.com" } } }"#,
             "dispatch_targets.ops.token_ref is required: the vault entry holding this Dispatch's machine token (e.g. \"dispatch/ops\"), or \"env:NAME\""),
            (#"return { dispatch_targets = { ops = { token_ref = "dispatch/ops" } } }"#,
             "dispatch_targets.ops.url is required: the Dispatch server's base URL, e.g. \"https://dispatch.example.com\""),
            (#"return { dispatch_targets = { ops = { url = "http://d.example.com", token_ref = "dispatch/ops" } } }"#,
             "dispatch_targets.ops.url: refusing the Dispatch URL http://d.example.com: only https:// is allowed, or http:// to 127.0.0.1, ::1 or localhost"),
            (#"return { dispatch_targets = { ops = { url = "not a url", token_ref = "dispatch/ops" } } }"#,
             "dispatch_targets.ops.url is not a URL"),
            (#"return { dispatch_targets = { ops = { url = "https://d.example.com", token_ref = "dispatch/ops", token = "x" } } }"#,
             "unknown key 'token' in dispatch_targets.ops (allowed: url, token_ref)"),
            (#"return { dispatch_targets = { ["o ps"] = { url = "https://d.example.com", token_ref = "dispatch/ops" } } }"#,
             "dispatch_targets: 'o ps' is not a target name (1–64 letters, digits, _ or -, starting with a letter or digit)"),
            (#"return { dispatch_targets = "https://d.example.com" }"#,
             "dispatch_targets must be a table of name = { url = \"https://…\", token_ref = \"VAULT_ENTRY\" }"),
            (#"return { dispatch_targets = { ops = "https://d.example.com" } }"#,
             "dispatch_targets.ops must be a table like { url = \"https://dispatch.example.com\", token_ref = \"dispatch/ops\" }"),
        ]
        for (text, message) in cases { XCTAssertEqual(refusal(text), message, text) }
    }

    static let never = "a recipe can make Dispatch carry its token, so it may never be a session, a webhook signing secret, an API key or a key of hubscript's own. Keep Dispatch's machine token in its own vault entry (hubscript vault set dispatch/NAME) and name that"

    /// Sessions, webhook signing secrets, profiles' API keys, keys recipes stored and
    /// hubscript's own keys are never a Dispatch credential: not as a top-level target's,
    /// a profile's target's, nor a profile's own `dispatch_token_ref`.
    func testCredentialsThatAreNotDispatchTokensAreRefused() {
        let ci = #"ci = { hub_url = "https://hub.example.com", api_key_env = "SUBSTRATAL_API_KEY" }"#
        let trigger = #"triggers = { hooks = { on = { "user.suspended" }, recipe = "r.lua", secret = "webhooks/hub" } }"#
        let cases: [(String, String, String)] = [
            ("sessions/prod", "dispatch_targets.ops.token_ref", "where `hubscript login` keeps a profile's session"),
            ("sessions/", "dispatch_targets.ops.token_ref", "where `hubscript login` keeps a profile's session"),
            ("hub/keys/ci", "dispatch_targets.ops.token_ref", "where hub.api_keys.create keeps the API keys recipes create"),
            ("hub/prod-key", "dispatch_targets.ops.token_ref", "the API key of profile 'prod' (api_key_ref)"),
            ("env:SUBSTRATAL_API_KEY", "dispatch_targets.ops.token_ref", "the API key of profile 'ci' (api_key_env)"),
            ("webhooks/hub", "dispatch_targets.ops.token_ref", "the webhook signing secret of trigger 'hooks'"),
            ("env:HUBSCRIPT_VAULT_KEY", "dispatch_targets.ops.token_ref", "the vault's key"),
            ("env:HUBSCRIPT_VAULT_PASSPHRASE", "dispatch_targets.ops.token_ref", "the vault's passphrase"),
            ("env:PGPASSWORD", "dispatch_targets.ops.token_ref", "the journal database's password"),
        ]
        for (ref, key, why) in cases {
            let text = "return { " + trigger + ", dispatch_targets = { ops = { url = \"https://d.example.com\", token_ref = \"" + ref
                + "\" } }, profiles = { " + Self.profile + " }, " + ci + " } }"
            XCTAssertEqual(refusal(text), "\(key) = \"\(ref)\" is \(why): \(Self.never)", ref)
        }
        XCTAssertEqual(refusal("""
            return { profiles = { \(Self.profile), dispatch_url = "https://d.example.com", dispatch_token_ref = "sessions/me" } } }
            """), "profiles.prod.dispatch_token_ref = \"sessions/me\" is where `hubscript login` keeps a profile's session: \(Self.never)")
        XCTAssertEqual(refusal("""
            return { profiles = { \(Self.profile), dispatch_targets = { pager = { url = "https://d.example.com", token_ref = "hub/prod-key" } } } } }
            """), "profiles.prod.dispatch_targets.pager.token_ref = \"hub/prod-key\" is the API key of profile 'prod' (api_key_ref): \(Self.never)")
        // A Dispatch token of its own is fine, in the vault or the environment.
        XCTAssertNil(refusal("""
            return { \(trigger), dispatch_targets = { ops = { url = "https://d.example.com", token_ref = "dispatch/ops" },
                                                      ci = { url = "https://d.example.com", token_ref = "env:DISPATCH_TOKEN" } },
                     profiles = { \(Self.profile), dispatch_url = "https://d.example.com", dispatch_token_ref = "dispatch/ci" } } }
            """))
    }
}
