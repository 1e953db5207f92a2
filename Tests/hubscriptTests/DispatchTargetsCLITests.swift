import Foundation
import XCTest

/// Dispatch targets end to end: `describe` shows where a recipe can send (each target's
/// URL and token under the profile), a run names a
/// configured target and gets its URL and token from the configuration, and a target or
/// credential the configuration cannot give stops the run before it starts (exit 2).
final class DispatchTargetsCLITests: XCTestCase {
    private var cli: CLIHarness!

    override func setUpWithError() throws {
        try super.setUpWithError()
        cli = try CLIHarness(testCase: self)
    }

    override func tearDown() {
        cli = nil
        super.tearDown()
    }

    static let recipe = """
        recipe { name = "page", needs = { "dispatch.send" }, targets = { "ops" } }
        local conn = dispatch.connect("ops")
        local r = conn:send{ title = "Disk full", body = "/var at 97%" }
        print(tostring(conn), r.accepted_devices)
        """

    func testDescribeShowsTheTargets() throws {
        try cli.file("page.lua", Self.recipe)
        let text = try cli.hubscript("describe", "page.lua")
        XCTAssertEqual(text.status, 0, text.stderrWithoutRunStart)
        XCTAssertTrue(text.stdout.contains("\nNeeds: dispatch.send\nTargets:\n  ops → the sandbox Dispatch (profile 'sandbox')\n"), text.stdout)
        try cli.file("hubscript.config.lua", """
            return {
              dispatch_targets = { ops = { url = "https://dispatch.example.com", token_ref = "dispatch/ops" } },
              profiles = { prod = { hub_url = "https://hub.example.com", api_key_env = "HUB_KEY" },
                           ci = { hub_url = "https://hub.example.com", api_key_env = "HUB_KEY", dispatch_targets = {
                             pager = { url = "https://pager.example.com", token_ref = "env:PAGER" } } } },
              default_profile = "prod",
            }
            """)
        let configured = try cli.hubscript("describe", "page.lua", "--config", "hubscript.config.lua")
        XCTAssertTrue(configured.stdout.contains("Targets:\n  ops → https://dispatch.example.com, token from the vault entry dispatch/ops (profile 'prod')\n"), configured.stdout)
        try cli.file("two.lua", #"recipe { name = "two", needs = { "dispatch.send" }, targets = { "ops", "pager" } }"#)
        let ci = try cli.hubscript("describe", "two.lua", "--config", "hubscript.config.lua", "--profile", "ci", "--json")
        XCTAssertTrue(ci.stdout.contains(#""target_destinations":{"ops":"https://dispatch.example.com, token from the vault entry dispatch/ops (profile 'ci')","pager":"https://pager.example.com, token from $PAGER (profile 'ci')"},"targets":["ops","pager"]"#), ci.stdout)
        let prod = try cli.hubscript("describe", "two.lua", "--config", "hubscript.config.lua")
        XCTAssertTrue(prod.stdout.contains("  pager → not defined for profile 'prod': the recipe cannot run there\n"), prod.stdout)
        try cli.file("bad.lua", #"recipe { name = "bad", targets = { "https://evil.example.com" } }"#)
        let bad = try cli.hubscript("describe", "bad.lua")
        XCTAssertEqual(bad.status, 2)
        XCTAssertTrue(bad.stderrWithoutRunStart.contains("manifest: targets[1] must be a target name such as \"ops\" (letters, digits, _ -; a URL is not a target: the configuration gives each target its URL)"), bad.stderrWithoutRunStart)
    }

    /// Against the built-in sandbox every target is the sandbox Dispatch: nothing leaves the machine.
    func testUnderTheSandboxATargetIsTheSandboxDispatch() throws {
        try cli.file("page.lua", Self.recipe)
        let run = try cli.hubscript("page.lua", "--state-dir", "st")
        XCTAssertEqual(run.status, 0, run.stderrWithoutRunStart)
        XCTAssertEqual(run.stdout, "<dispatch connection ops>\t1\n")
        let log = try cli.hubscript("sandbox", "dispatch-log", "--state-dir", "st")
        XCTAssertTrue(log.stdout.contains("Disk full"), log.stdout + log.stderrWithoutRunStart)
    }

    /// `hubscript test`: a recipe's targets are the test sandbox's Dispatch, whatever the
    /// configuration says, so a test never sends anything out of the process.
    func testUnderHubscriptTestATargetIsTheTestSandboxsDispatch() throws {
        try cli.file("page.lua", Self.recipe)
        try cli.file("page_test.lua", """
            test.case("pages ops", function()
              local s = test.sandbox {}
              local r = s:run("page.lua", {})
              expect(r).to_succeed()
              expect(r.output[1]).to_be("<dispatch connection ops>\t1")
              expect(#s:dispatch_sent()).to_be(1)
              expect(s:dispatch_sent()[1].title).to_be("Disk full")
            end)
            """)
        try cli.file("hubscript.config.lua", """
            return { dispatch_targets = { ops = { url = "https://dispatch.example.com", token_ref = "dispatch/ops" } } }
            """)
        let result = try cli.hubscript("test", "page_test.lua", "--config", "hubscript.config.lua")
        XCTAssertEqual(result.status, 0, result.stdout + result.stderrWithoutRunStart)
        XCTAssertTrue(result.stdout.contains("ok   page_test.lua: pages ops"), result.stdout)
    }

    func testATargetTheConfigurationLacksStopsTheRunBeforeItStarts() throws {
        try cli.file("page.lua", Self.recipe)
        try cli.file("hubscript.config.lua", """
            return {
              dispatch_targets = { pager = { url = "https://pager.example.com", token_ref = "dispatch/pager" } },
              profiles = { prod = { hub_url = "https://hub.example.com", api_key = "satk_test_x", api_key_permissions = { "users.list" } } },
            }
            """)
        let run = try cli.hubscript("page.lua", "--config", "hubscript.config.lua")
        XCTAssertEqual(run.status, 2, run.stdout + run.stderrWithoutRunStart)
        XCTAssertEqual(run.stdout, "")
        XCTAssertTrue(run.stderrWithoutRunStart.contains("hubscript.config.lua defines no Dispatch target 'ops' for profile 'prod' (targets: pager): add dispatch_targets = { ops = { url = \"https://…\", token_ref = \"dispatch/ops\" } } at its top level or in the profile"), run.stderrWithoutRunStart)
    }

    func testASessionIsNeverADispatchToken() throws {
        try cli.file("page.lua", Self.recipe)
        try cli.file("hubscript.config.lua", """
            return {
              dispatch_targets = { ops = { url = "https://attacker.example.com", token_ref = "sessions/me" } },
              profiles = { me = { hub_url = "https://hub.example.com", email = "me@example.com" } },
            }
            """)
        let run = try cli.hubscript("page.lua", "--config", "hubscript.config.lua")
        XCTAssertEqual(run.status, 2, run.stdout + run.stderrWithoutRunStart)
        XCTAssertTrue(run.stderrWithoutRunStart.contains("dispatch_targets.ops.token_ref = \"sessions/me\" is where `hubscript login` keeps a profile's session: a recipe can make Dispatch carry its token"), run.stderrWithoutRunStart)
    }

    /// The profile's API key reached under another name — a second environment variable
    /// holding the same value, or a literal key copied into one — is still the API key: a
    /// target never carries the run's Hub credential, whatever its token_ref is called.
    func testTheRunsHubCredentialUnderAnotherNameIsNeverADispatchToken() throws {
        try cli.file("page.lua", Self.recipe)
        let key = "satk_live_Alias0123456789"
        let profiles = [#"api_key_env = "HUB_KEY""#, #"api_key = "\#(key)""#]
        for (index, auth) in profiles.enumerated() {
            try cli.file("hubscript.config.lua", """
                return {
                  dispatch_targets = { ops = { url = "https://attacker.example.com", token_ref = "env:PAGER_TOKEN" } },
                  profiles = { prod = { hub_url = "https://hub.example.com", \(auth), api_key_permissions = { "users.list" } } },
                }
                """)
            let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("hubscript-alias-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: scratch) }
            let environment = try CLIHarness.isolatedEnvironment(scratch: scratch, sandboxConfig: false,
                                                                       extra: ["HUB_KEY": key, "PAGER_TOKEN": key])
            let run = try CLIHarness.run(["page.lua", "--config", "hubscript.config.lua"], in: cli.root, environment: environment)
            XCTAssertEqual(run.status, 2, "\(index): " + run.stdout + run.stderrWithoutRunStart)
            XCTAssertEqual(run.stdout, "", "\(index)")
            XCTAssertTrue(run.stderrWithoutRunStart.contains("the recipe sends to the Dispatch target 'ops', which cannot be used: its token ($PAGER_TOKEN) is the Hub credential of profile 'prod' under another name: a recipe can make Dispatch carry its token, so it may never be a session or an API key. Keep Dispatch's machine token in its own vault entry (hubscript vault set dispatch/NAME) and name that"), "\(index): " + run.stderrWithoutRunStart)
            XCTAssertFalse(run.stderrWithoutRunStart.contains("Alias0123456789"), run.stderrWithoutRunStart)
        }
    }
}
