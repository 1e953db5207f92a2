import Foundation
import HubClient
import ScriptHost
import XCTest
import Configuration

/// The configuration file: its search order, how it is evaluated, and its profiles.
final class ConfigTests: XCTestCase {
    var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("hubscript-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    func write(_ name: String, _ text: String) throws -> URL {
        let url = folder.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    func testNoConfigMeansTheBuiltinSandbox() throws {
        let config = try LoadedConfiguration.load(explicit: nil, environment: ["HOME": folder.path], currentDirectory: folder.path).hub
        XCTAssertNil(config.source)
        let (name, setting) = try config.profile(named: nil)
        XCTAssertEqual(name, "sandbox")
        XCTAssertEqual(setting, .sandbox)
    }

    func testSearchOrderExplicitThenEnvironmentThenWorkingDirectoryThenXDG() throws {
        let explicit = try write("explicit.lua", #"return { profiles = { a = { sandbox = true } } }"#)
        let fromEnv = try write("env.lua", #"return { profiles = { b = { sandbox = true } } }"#)
        _ = try write("cwd/hubscript.config.lua", #"return { profiles = { c = { sandbox = true } } }"#)
        _ = try write("xdg/hubscript/config.lua", #"return { profiles = { d = { sandbox = true } } }"#)
        let env = ["HUBSCRIPT_CONFIG": fromEnv.path, "XDG_CONFIG_HOME": folder.appendingPathComponent("xdg").path]
        let cwd = folder.appendingPathComponent("cwd").path
        XCTAssertEqual(try LoadedConfiguration.load(explicit: explicit.path, environment: env, currentDirectory: cwd).hub.profiles.keys.first, "a")
        XCTAssertEqual(try LoadedConfiguration.load(explicit: nil, environment: env, currentDirectory: cwd).hub.profiles.keys.first, "b")
        var noEnv = env
        noEnv["HUBSCRIPT_CONFIG"] = nil
        XCTAssertEqual(try LoadedConfiguration.load(explicit: nil, environment: noEnv, currentDirectory: cwd).hub.profiles.keys.first, "c")
        XCTAssertEqual(try LoadedConfiguration.load(explicit: nil, environment: noEnv, currentDirectory: folder.path).hub.profiles.keys.first, "d")
    }

    func testProfilesParseIntoHubProfiles() throws {
        let url = try write("c.lua", """
            -- comments are fine: this is Lua
            return {
              default_profile = "prod",
              profiles = {
                prod = { hub_url = "https://hub.example.com", api_key_env = "HUB_KEY", rate_limit_per_minute = 50,
                         api_key_permissions = { "users.list" } },
                me = { hub_url = "https://hub.example.com", email = "me@example.com", api_prefix = "/v1" },
                dev = { sandbox = true },
              },
            }
            """)
        let config = try LoadedConfiguration.load(explicit: url.path).hub
        let (name, setting) = try config.profile(named: nil)
        XCTAssertEqual(name, "prod")
        guard case .hub(let prod) = setting else { return XCTFail("prod is a hub profile") }
        XCTAssertEqual(prod.hubURL.absoluteString, "https://hub.example.com")
        XCTAssertEqual(prod.auth, .apiKey(.environment("HUB_KEY")))
        XCTAssertEqual(prod.rateLimitPerMinute, 50)
        XCTAssertEqual(prod.apiKeyPermissions, ["users.list"])
        guard case .hub(let me) = try config.profile(named: "me").setting else { return XCTFail("me is a hub profile") }
        XCTAssertEqual(me.auth, .session(email: "me@example.com"))
        XCTAssertEqual(me.apiPrefix, "/v1")
        XCTAssertEqual(try config.profile(named: "dev").setting, .sandbox)
    }

    /// `ca_file`: kept absolute; a relative path is relative to the configuration's folder.
    /// Whether it holds certificates is checked when the profile connects (TLSTrustTests).
    func testCAFileIsResolvedAgainstTheConfigurationsFolder() throws {
        let url = try write("sub/c.lua", """
            return { profiles = {
              rel = { hub_url = "https://h", api_key_env = "K", ca_file = "certs/../ca.pem" },
              abs = { hub_url = "https://h", api_key_env = "K", ca_file = "/etc/ssl/private-ca.pem" },
              none = { hub_url = "https://h", api_key_env = "K" },
            } }
            """)
        let config = try LoadedConfiguration.load(explicit: url.path).hub
        func caFile(_ name: String) throws -> String? {
            guard case .hub(let profile) = try config.profile(named: name).setting else { XCTFail("\(name) is a hub profile"); return nil }
            return profile.caFile
        }
        XCTAssertEqual(try caFile("rel"), folder.appendingPathComponent("sub/ca.pem").standardizedFileURL.path)
        XCTAssertEqual(try caFile("abs"), "/etc/ssl/private-ca.pem")
        XCTAssertNil(try caFile("none"))
        let bad = try write("bad-ca.lua", #"return { profiles = { p = { hub_url = "https://h", api_key_env = "K", ca_file = 1 } } }"#)
        XCTAssertThrowsError(try LoadedConfiguration.load(explicit: bad.path).hub) { error in
            XCTAssertEqual("\(error)", "config \(bad.path): profiles.p.ca_file must be a non-empty string")
        }
    }

    func testMistakesNameTheKey() throws {
        let cases: [(String, String)] = [
            (#"return { profiles = { p = { hub_url = "https://h", emial = "x" } } }"#,
             "unknown key 'emial' in profiles.p (allowed: sandbox, hub_url, api_prefix, email, api_key, api_key_env, api_key_ref, api_key_id, api_key_permissions, rate_limit_per_minute, dispatch_url, dispatch_token_ref, dispatch_targets, api_key_record_profile, gate, ca_file)"),
            (#"return { profiles = { p = { email = "x@y" } } }"#,
             "profiles.p.hub_url is required (e.g. \"https://api.substratalapps.com\"), or set sandbox = true"),
            (#"return { profiles = { p = { hub_url = "https://h" } } }"#,
             "profiles.p needs exactly one of email (a user session: hubscript login), api_key_ref (the vault entry holding an API key), api_key_env (the variable holding it, for CI) or api_key"),
            (#"return { profile = {} }"#, "unknown key 'profile' in the top level (allowed: default_profile, profiles, dispatch_targets, jobs, triggers, libraries, journal, approvals, retention)"),
            (#"return 42"#, "must return a table, e.g. return { profiles = { … } }"),
        ]
        for (text, message) in cases {
            let url = try write("bad.lua", text)
            XCTAssertThrowsError(try LoadedConfiguration.load(explicit: url.path).hub) { error in
                XCTAssertEqual("\(error)", "config \(url.path): \(message)")
            }
        }
    }

    func testConfigFilesAreDataOnly() throws {
        let url = try write("evil.lua", #"return { profiles = { p = { hub_url = io.read() } } }"#)
        XCTAssertThrowsError(try LoadedConfiguration.load(explicit: url.path).hub) { error in
            XCTAssertTrue("\(error)".hasSuffix("evil.lua:1: only literal values are allowed here (data only), not the global 'io'"), "\(error)")
        }
    }

    func testUnknownProfileAndAmbiguousDefault() throws {
        let url = try write("two.lua", #"return { profiles = { a = { sandbox = true }, b = { sandbox = true } } }"#)
        let config = try LoadedConfiguration.load(explicit: url.path).hub
        XCTAssertThrowsError(try config.profile(named: "zz")) { error in
            XCTAssertEqual("\(error)", "no profile 'zz' in \(url.path) (profiles: a, b, or 'sandbox')")
        }
        XCTAssertThrowsError(try config.profile(named: nil)) { error in
            XCTAssertEqual("\(error)", "\(url.path) has several profiles and no default_profile; pass --profile NAME")
        }
        XCTAssertThrowsError(try LoadedConfiguration.load(explicit: folder.appendingPathComponent("missing.lua").path).hub) { error in
            XCTAssertTrue("\(error)".hasSuffix("does not exist (given with --config)"))
        }
    }
}
