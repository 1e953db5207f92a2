import Foundation
import XCTest

/// recipes/forward-alerts.lua against a served sandbox whose Hub and Dispatch fail 20 %
/// of requests (errors and lost answers), killed with SIGKILL on pending writes and
/// restarted both as new runs and by `runs resume`: every alert reaches Dispatch
/// exactly once.
extension DispatchCLITests {
    static let suspended = 40

    /// Suspends the first `count` active users (40 `user.suspended` audit events).
    static let suspendMany = """
        recipe { name = "suspend-many", needs = { "users.list", "users.manage" }, limits = { writes = 100 },
                 params = { count = { type = "integer", default = \(suspended) } } }
        local n = 0
        for u in hub.users.list { status = "active" } do
          if n >= params.count then break end
          if u.email ~= "admin@example.com" and u.email ~= "support@example.com" then
            hub.users.suspend(u.id, { reason = "forward-alerts test" })
            n = n + 1
          end
        end
        print("suspended " .. n)
        """

    func testForwardAlertsSendsEveryAlertExactlyOnceThroughFaultsAndKills() throws {
        let harness = self
        let (cli, hubState, served, config) = try harness.servedDispatch(faults: "latency=30ms,error=0.1,lost=0.1,retry_after=0,seed=11")
        defer { served.stop() }
        let extra = ["--config", config, "--profile", "served"]
        let since = ISO8601DateFormatter().string(from: Date().addingTimeInterval(-2))
        let setup = try cli.run([try cli.file("suspend-many.lua", Self.suspendMany)] + extra, expect: 0)
        XCTAssertTrue(setup.stdout.contains("suspended \(Self.suspended)"), setup.output)

        let recipe = CLIHarness.repoRoot.appendingPathComponent("recipes/forward-alerts.lua").path
        let params = ["--param", "since=\(since)", "--param", "actions=user.suspended", "--param", "inbox="]
        var trials: [KillTrial] = []
        func kill(_ args: [String], _ id: String, atDone done: Int) throws {
            let states = try cli.killOnPending(args, runID: id, atDone: done, within: 90)
            trials.append(KillTrial(states: states, received: try harness.dispatchLog(cli, state: hubState).count, server: "Dispatch"))
        }
        // A first run killed part-way; a NEW run (as the next scheduled one would be)
        // starts from the checkpoint the killed one left and is killed too; it is then
        // resumed and killed again, and resumed to the end.
        try kill([recipe, "--run-id", "fa_1"] + params + extra, "fa_1", atDone: 12)
        try kill([recipe, "--run-id", "fa_2"] + params + extra, "fa_2", atDone: 10)
        try kill(["runs", "resume", "fa_2"] + extra, "fa_2", atDone: 30)
        let finished = try cli.run(["runs", "resume", "fa_2"] + extra, expect: 0)
        XCTAssertTrue(finished.stdout.contains("forwarded "), finished.output)
        XCTAssertTrue(trials.contains { $0.pending >= 1 }, "no kill landed on a pending write: \(trials)")

        // A later run finds nothing new.
        let again = try cli.run([recipe] + params + extra, expect: 0)
        XCTAssertTrue(again.stdout.contains("forwarded 0 alerts (0 already sent before)"), again.output)

        // Dispatch holds one send per suspension: keys and bodies name each event once.
        let log = try harness.dispatchLog(cli, state: hubState).filter { ($0["title"] as? String) == "Hub: user.suspended" }
        var perEvent: [String: Int] = [:]
        for entry in log {
            let body = entry["body"] as? String ?? ""
            let event = body.range(of: #"evt_[a-z0-9]+"#, options: String.CompareOptions.regularExpression).map { String(body[$0]) } ?? "?"
            XCTAssertEqual(entry["key"] as? String, "alert-" + event, "the key derives from the event id")
            perEvent[event, default: 0] += 1
        }
        XCTAssertEqual(perEvent.count, Self.suspended, "alerts for distinct events (trials: \(trials))")
        XCTAssertEqual(perEvent.values.filter { $0 != 1 }.count, 0, "an event was forwarded twice: \(perEvent)")
    }
}
