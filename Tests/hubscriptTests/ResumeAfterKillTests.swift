import Foundation
import XCTest

/// docs/design.md "Idempotency, the journal, resume": `kill -9` at any point followed by
/// `hubscript runs resume` does every change exactly once. A recipe makes 300 grants;
/// the process is killed three times part-way (after about 50, 150 and 250 journalled
/// writes), then resumed to the end. Each grant waits 15 ms of CPU time first, so that
/// polling `hubscript runs show` (about 40 ms a call) sees the kill points in time.
///
/// What this cannot show: a duplicate. The Hub refuses a second live grant of one app to
/// one user, so a resend that the Hub did not replay would fail, not grant twice.
/// `ResumeAfterKillOnPendingTests` kills on pending notifications, which have no such
/// guard, and counts what the Hub received.
final class ResumeAfterKillTests: XCTestCase {
    static let recipe = """
        recipe {
          name = "grant-many",
          version = "1.0.0",
          description = "Test fixture: grant an application to the first N active users.",
          params = {
            app   = { type = "string", default = "app_hub" },
            count = { type = "integer", default = 300 },
            pause_ms = { type = "integer", default = 0, description = "CPU time to spend before each grant" },
          },
          needs  = { "users.list", "entitlements.manage" },
          limits = { writes = 1000 },
        }
        local n = 0
        for u in hub.users.list { status = "active" } do
          if n >= params.count then break end
          local t = os.clock()
          while (os.clock() - t) * 1000 < params.pause_ms do end
          hub.entitlements.grant(u.id, { application_id = params.app })
          n = n + 1
        end
        print(("granted %s to %d users"):format(params.app, n))
        """

    func writeStates(_ cli: CLIHarness, _ id: String) throws -> [String: Int] { try cli.writeStates(id) }

    /// Starts `args`, polls the journal, and SIGKILLs the process once run `id` has at
    /// least `threshold` done writes. Returns the done count seen at the kill.
    func kill(_ cli: CLIHarness, _ args: [String], runID id: String, atDone threshold: Int,
              file: StaticString = #filePath, line: UInt = #line) throws -> Int {
        let (p, stopDraining) = try cli.startDrained(args)
        defer { stopDraining() }
        // A pass that meets a key an earlier kill left in flight waits for the Hub to
        // abandon it (up to 60 s) before it reaches its own kill point.
        let deadline = Date().addingTimeInterval(120)
        var done = 0
        while p.isRunning && Date() < deadline {
            done = try writeStates(cli, id)["done"] ?? 0
            if done >= threshold {
                Foundation.kill(p.processIdentifier, SIGKILL)
                break
            }
            usleep(5_000)
        }
        p.waitUntilExit()
        XCTAssertEqual(p.terminationReason, .uncaughtSignal,
                       "the run should have been killed at \(threshold) done writes, but it ended (status \(p.terminationStatus)) at \(done)",
                       file: file, line: line)
        XCTAssertEqual(p.terminationStatus, SIGKILL, file: file, line: line)
        // A request killed mid-flight keeps its idempotency key "in flight" at the Hub for
        // about a second (`idempotency_key_in_flight`, retry after 1 s): the next pass
        // waits it out, or it could fail on that key before reaching its own kill point.
        Thread.sleep(forTimeInterval: 1.2)
        return done
    }

    /// The first 300 active users of the sandbox in `state`, newest first.
    func first300ActiveUsers(_ cli: CLIHarness, state: URL? = nil) throws -> [String] {
        let reader = try cli.sandbox(state: state)
        let users = Array(try reader.all("/users", "status=active").compactMap { $0.string("id") }.prefix(300))
        XCTAssertEqual(users.count, 300, "the seed must have 300 active users")
        XCTAssertEqual(try reader.all("/entitlements", "application_id=app_hub&include_inactive=true").count, 0)
        return users
    }

    /// Runs the fixture as run `id`, kills it at about 50, 150 and 250 done writes,
    /// resumes it to the end, and checks the journal. `extra` goes to every command.
    func killThreeTimesAndResume(_ cli: CLIHarness, id: String, pauseMs: Int, extra: [String] = [],
                                 file: StaticString = #filePath, line: UInt = #line) throws {
        let recipe = try cli.file("grant-many.lua", Self.recipe)
        var killedAt: [Int] = []
        killedAt.append(try kill(cli, [recipe, "--param", "pause_ms=\(pauseMs)", "--run-id", id, "--json"] + extra,
                                 runID: id, atDone: 50, file: file, line: line))
        killedAt.append(try kill(cli, ["runs", "resume", id, "--json"] + extra, runID: id, atDone: 150, file: file, line: line))
        killedAt.append(try kill(cli, ["runs", "resume", id, "--json"] + extra, runID: id, atDone: 250, file: file, line: line))
        for (n, (done, target)) in zip(killedAt, [50, 150, 250]).enumerated() {
            XCTAssertTrue((target..<(target + 40)).contains(done), "kill \(n + 1) at \(done) done writes, aimed at \(target)",
                          file: file, line: line)
        }

        // Resume until it succeeds (once should do).
        var final: CLIHarness.Result?
        var attempts = 3
        for _ in 0..<5 {
            let r = try cli.run(["runs", "resume", id] + extra)
            final = r
            attempts += 1
            if r.status == 0 { break }
        }
        XCTAssertEqual(final?.status, 0, final?.output ?? "", file: file, line: line)
        XCTAssertTrue(final?.stdout.contains("granted app_hub to 300 users") == true, final?.output ?? "", file: file, line: line)

        // The journal: 300 done writes, nothing pending or failed.
        XCTAssertEqual(try writeStates(cli, id), ["done": 300], "journal write states after the final resume", file: file, line: line)
        let show = try cli.run(["runs", "show", id], expect: 0)
        XCTAssertTrue(show.stdout.contains("mode      run, succeeded, attempts \(attempts)"), show.stdout, file: file, line: line)
    }

    /// The Hub holds each grant exactly once, with one audit event each.
    func assertEachGrantOnce(_ cli: CLIHarness, state: URL? = nil, users: [String],
                             file: StaticString = #filePath, line: UInt = #line) throws {
        let reader = try cli.sandbox(state: state)
        let entitlements = try reader.all("/entitlements", "application_id=app_hub&include_inactive=true")
        XCTAssertEqual(entitlements.count, 300, "entitlements for app_hub", file: file, line: line)
        XCTAssertEqual(Set(entitlements.compactMap { $0.string("user_id") }), Set(users), file: file, line: line)
        XCTAssertTrue(entitlements.allSatisfy { $0.string("status") == "active" && $0.string("source") == "admin_grant" },
                      file: file, line: line)
        let events = try reader.all("/audit-events", "action=entitlement.granted&application_id=app_hub")
        XCTAssertEqual(events.count, 300, "entitlement.granted audit events for app_hub", file: file, line: line)
        XCTAssertEqual(Set(events.compactMap { $0.string("target_user_id") }), Set(users), file: file, line: line)
    }

    /// The built-in sandbox (in the state directory, in process): kills land mostly
    /// between writes.
    func testKilledThreeTimesThenResumedMakesEachGrantExactlyOnce() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.resetSandbox(users: 500)
        let users = try first300ActiveUsers(cli)
        try killThreeTimesAndResume(cli, id: "run_kill_test", pauseMs: 15)
        try assertEachGrantOnce(cli, users: users)
    }

    /// A served sandbox with 20 ms of latency per request and 5 % lost responses: kills
    /// land mostly while a grant is in flight (journalled pending, maybe committed by the
    /// Hub), so resuming resends it under the same key and the Hub replays it.
    func testKilledMidRequestAgainstAServedSandboxWithFaults() throws {
        let cli = try CLIHarness(testCase: self)
        let hubState = cli.root.appendingPathComponent("hub-state")
        try cli.resetSandbox(users: 500, state: hubState)
        let users = try first300ActiveUsers(cli, state: hubState)

        let server = try ServedSandbox(cli, state: hubState, faults: "latency=20ms,lost=0.05,seed=7")
        try killThreeTimesAndResume(cli, id: "run_kill_served", pauseMs: 0, extra: ["--config", server.config])
        server.stop()
        try assertEachGrantOnce(cli, state: hubState, users: users)
    }
}

/// Text collected from a child's pipes.
final class LockedText: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    func append(_ d: Data) { lock.withLock { data.append(d) } }
    var text: String { lock.withLock { String(decoding: data, as: UTF8.self) } }
}
