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

    /// What one kill left behind.
    struct Trial: CustomStringConvertible {
        /// Journal, after the kill.
        let done: Int
        let pending: Int
        /// Notifications the Hub committed for the run, after its request in flight ended.
        let received: Int
        var description: String { "journal done \(done), pending \(pending); Hub received \(received)" }
    }

    /// The journalled writes of run `id` by state.
    func writeStates(_ cli: CLIHarness, _ id: String) throws -> [String: Int] { try cli.writeStates(id) }

    /// `notification.sent` events of the fixture's app (one per notification the Hub made).
    func notified(_ reader: SandboxReader) throws -> [String] {
        try reader.all("/audit-events", "action=notification.sent&application_id=app_hub").compactMap { $0.string("target_user_id") }
    }

    /// Starts `args` and SIGKILLs it once run `id` has at least `threshold` done writes
    /// and one pending (a request in flight); fails the test if the run ended first.
    func killOnPending(_ cli: CLIHarness, _ args: [String], runID id: String, atDone threshold: Int,
                       reader: SandboxReader, baseline: Int) throws -> Trial {
        let (p, stopDraining) = try cli.startDrained(args)
        defer { stopDraining() }
        let deadline = Date().addingTimeInterval(30)
        while p.isRunning && Date() < deadline {
            let states = try writeStates(cli, id)
            if states["done", default: 0] >= threshold && states["pending", default: 0] >= 1 {
                Foundation.kill(p.processIdentifier, SIGKILL)
                break
            }
            usleep(5_000)
        }
        p.waitUntilExit()
        XCTAssertEqual(p.terminationReason, .uncaughtSignal, "the run ended (status \(p.terminationStatus)) before the kill at \(threshold) done")
        // The sandbox's latency is 150 ms: let the request in flight reach its handler.
        usleep(600_000)
        let states = try writeStates(cli, id)
        return Trial(done: states["done", default: 0], pending: states["pending", default: 0],
                     received: try notified(reader).count - baseline)
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
        var trials: [Trial] = []
        trials.append(try killOnPending(cli, [recipe, "--run-id", id] + extra, runID: id, atDone: 4,
                                        reader: reader, baseline: baseline))
        for threshold in [10, 16] {
            trials.append(try killOnPending(cli, ["runs", "resume", id] + extra, runID: id, atDone: threshold,
                                            reader: reader, baseline: baseline))
        }
        XCTAssertTrue(trials.contains { $0.pending >= 1 }, "no kill landed on a pending write: \(trials)")
        XCTAssertTrue(trials.contains { $0.received > $0.done },
                      "the Hub never held a write the journal had not recorded done, so no resend needed a replay: \(trials)")
        for trial in trials {
            XCTAssertLessThanOrEqual(trial.received, trial.done + trial.pending, "the Hub received a write the journal never sent: \(trials)")
        }

        let final = try cli.run(["runs", "resume", id] + extra, expect: 0)
        XCTAssertTrue(final.stdout.contains("notified \(Self.count) users"), final.output)
        XCTAssertEqual(try writeStates(cli, id), ["done": Self.count], "journal write states after the final resume")

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
