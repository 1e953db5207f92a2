import Foundation
import XCTest

/// `hubscript listen --setup` (docs/webhooks.md): "Triggers that share a
/// profile and a vault entry share one webhook", and "running it twice changes nothing
/// the second time": users run it again after every config change.
final class ListenSetupIdempotenceTests: XCTestCase {
    var vault: VaultCLI!
    var cli: CLIHarness { vault.harness }

    /// Two triggers on one profile with different vault entries: each group is looked up
    /// by the listener's URL alone, so both find the same webhook. The second group
    /// rotates its secret (the first entry now holds the previous one, which expires in
    /// 24 h) and replaces its events with its own, so `user.suspended` is no longer
    /// delivered; every later --setup flips the events back and forth. Expected: after
    /// one --setup, the Hub delivers both event types, each trigger's entry verifies its
    /// deliveries, and a second --setup changes nothing.
    func testTwoTriggersWithTheirOwnSecretsKeepBothSubscriptions() throws {
        vault = try VaultCLI(testCase: self)
        try vault.initialise()
        cli.extraEnvironment = ["HUBSCRIPT_VAULT_KEY_FILE": vault.keyFile]
        try cli.resetSandbox(users: 20)
        try cli.file("one.lua", "recipe { name = \"one\" }\nprint('event')\n")
        let config = try cli.file("hubscript.config.lua", """
            return { profiles = { dev = { sandbox = true } }, triggers = {
              a = { on = { "user.suspended" }, recipe = "one.lua", secret = "webhooks/a" },
              b = { on = { "role.assigned" }, recipe = "one.lua", secret = "webhooks/b" },
            } }
            """)
        let port = try HTTPServerProbe().port
        let setup = ["listen", "--setup", "--port", String(port), "--config", config]
        // One URL at one Hub is one webhook with one secret: --setup refuses, registers
        // nothing, and says what to change (before the fix it flipped one webhook's
        // events on every run and rotated the other trigger's secret away).
        let first = try cli.run(setup)
        XCTAssertEqual(first.status, 2, first.output)
        XCTAssertEqual(first.stderr, "hubscript listen: triggers a and b deliver to http://127.0.0.1:\(port)/hooks at the same Hub but name "
                       + "different vault entries (webhooks/a, webhooks/b); one webhook has one signing secret: give them the same secret entry\n")
        XCTAssertEqual(try cli.sandbox().all("/webhooks", "").count, 0)
    }
}
