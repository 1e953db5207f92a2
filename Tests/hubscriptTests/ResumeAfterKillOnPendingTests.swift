import Foundation
import XCTest

/// `kill -9` while a write is `pending`, then `hubscript runs resume`, on a write with
/// no natural uniqueness guard: the Hub takes a second `hub.notifications.send` to the
/// same user as a second notification (a second live grant, by contrast, is refused —
/// so `ResumeAfterKillTests` cannot see a duplicate). Only the idempotency key keeps
/// each notification to one: the journal resends a pending write under its key, and
/// the Hub replays it.
///
/// Each trial kills the run while the journal shows a write pending, waits for the
/// served sandbox to finish the request in flight, and compares what the Hub received
/// with what the journal records as done. The test fails if no kill landed on a pending
/// write or if the Hub never held a write the journal did not (then no resend had to be
/// replayed, and the trial proved nothing).
final class ResumeAfterKillOnPendingTests: XCTestCase {
    static let count = 24
    static let recipe = """
        recipe {
          name = "notify-many",
          version = "1.0.0",
          description = "Test fixture: notify the first N active users.",
          params = { count = { type = "integer", default = \(count) } },
          needs  = { "users.list", "notifications.send" },
          limits = { writes = 1000 },
        }
        local n = 0
        for u in hub.users.list { status = "active" } do
          if n >= params.count then break end
          hub.notifications.send("app_hub", { user_id = u.id, title = "Maintenance tonight",
                                              body = "The Hub is read-only from 22:00.", category = "test.kill" })
          n = n + 1
        end
        print(("notified %d users"):format(n))
        """

    /// `notification.sent` events of the fixture's app (one per notification the Hub made).
    func notified(_ reader: SandboxReader) throws -> [String] {
        try reader.all("/audit-events", "action=notification.sent&application_id=app_hub").compactMap { $0.string("target_user_id") }
    }

    /// Kills `args` on a pending write (`CLIHarness.killOnPending`; the sandbox's latency
    /// is 150 ms) and counts what the Hub made for the run.
    func killOnPending(_ cli: CLIHarness, _ args: [String], runID id: String, atDone threshold: Int,
                       reader: SandboxReader, baseline: Int) throws -> KillTrial {
        let states = try cli.killOnPending(args, runID: id, atDone: threshold)
        return KillTrial(states: states, received: try notified(reader).count - baseline, server: "the Hub")
    }

    func testKilledOnPendingNotificationsThenResumedSendsEachOnce() throws {
        let cli = try CLIHarness(testCase: self)
        let hubState = cli.root.appendingPathComponent("hub-state")
        try cli.resetSandbox(state: hubState)
        let server = try ServedSandbox(cli, state: hubState, faults: "latency=150ms")
        defer { server.stop() }
        let reader = try SandboxReader(served: server.url)
        let before = try notified(reader)
        let baseline = before.count
        let users = Array(try reader.all("/users", "status=active").compactMap { $0.string("id") }.prefix(Self.count))
        XCTAssertEqual(users.count, Self.count)

        let id = "run_kill_notify"
        let recipe = try cli.file("notify-many.lua", Self.recipe)
        let extra = ["--config", server.config]
        var trials: [KillTrial] = []
        trials.append(try killOnPending(cli, [recipe, "--run-id", id] + extra, runID: id, atDone: 4,
                                        reader: reader, baseline: baseline))
        for threshold in [10, 16] {
            trials.append(try killOnPending(cli, ["runs", "resume", id] + extra, runID: id, atDone: threshold,
                                            reader: reader, baseline: baseline))
        }
        KillTrial.assertMeaningful(trials)

        let final = try cli.run(["runs", "resume", id] + extra, expect: 0)
        XCTAssertTrue(final.stdout.contains("notified \(Self.count) users"), final.output)
        XCTAssertEqual(try cli.writeStates(id), ["done": Self.count], "journal write states after the final resume")

        // Exactly one notification per user: every write that was pending at a kill and
        // resent on resume was replayed by the Hub, not made again.
        let sent = try notified(reader)
        XCTAssertEqual(sent.count - baseline, Self.count, "notifications the Hub made (trials: \(trials))")
        var perUser: [String: Int] = [:]
        for user in sent { perUser[user, default: 0] += 1 }
        for user in before { perUser[user, default: 0] -= 1 }
        perUser = perUser.filter { $0.value != 0 }
        XCTAssertEqual(perUser, Dictionary(uniqueKeysWithValues: users.map { ($0, 1) }))
    }
}
