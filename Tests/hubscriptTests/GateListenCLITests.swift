import Foundation
import HubSandbox
import XCTest

/// Triggers go through the run's one gate: a trigger whose profile's API key has no known
/// permissions does not run a recipe that writes, whatever events arrive.
extension ListenCLITests {
    func testATriggerWithAKeyOfUnknownPermissionsRunsNothing() throws {
        let prepared = try prepare()
        defer { prepared.sandbox.stop() }
        let config = try prepared.cli.file("gate.config.lua", """
            return {
              profiles = {
                lab = { hub_url = "\(prepared.hubURL)", api_key = "\(SandboxFixtures.jobsKeySecret)", api_key_id = "key_jobs" },
                ops = { hub_url = "\(prepared.hubURL)", api_key = "\(SandboxFixtures.opsKeySecret)" },
              },
              triggers = {
                offboard = { on = { "user.suspended" }, recipe = "on-suspend.lua", profile = "ops", secret = "webhooks/hub" },
              },
            }
            """)
        let s = Setup(vault: prepared.vault, cli: prepared.cli, sandbox: prepared.sandbox, hubURL: prepared.hubURL, config: config)
        let (listener, listenURL) = try startListener(s)
        defer { listener.stop() }
        _ = try subscribe(s, listenURL)
        let run = try s.cli.run(["suspend-some.lua", "--profile", "lab", "--config", s.config])
        XCTAssertEqual(run.status, 0, run.output)
        let denial = "capability denied: profile 'ops' uses an API key whose permissions hubscript does not know, "
            + "and this recipe writes (it needs notifications.send); nothing ran."
        XCTAssertTrue(waitUntil { listener.output.components(separatedBy: denial).count - 1 >= 3 }, listener.output)
        XCTAssertEqual(try notified(s), [:])
    }
}
