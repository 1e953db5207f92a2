import Foundation
import XCTest

/// DESIGN.md "Idempotency, the journal, resume": `kill -9` at any point followed by
/// `hubscript runs resume` does every change exactly once. A recipe makes 300 grants;
/// the process is killed three times part-way (after about 50, 150 and 250 journalled
/// writes), then resumed to the end. Each grant waits 15 ms of CPU time first, so that
/// polling `hubscript runs show` (about 40 ms a call) sees the kill points in time.
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

    /// The journalled writes of run `id` by state (`done`, `pending`, `failed`).
    func writeStates(_ cli: CLIHarness, _ id: String) throws -> [String: Int] {
        let r = try cli.run(["runs", "show", id])
        guard r.status == 0 else { return [:] }
        var states: [String: Int] = [:]
        var inWrites = false
        for line in r.stdout.split(separator: "\n") {
            if line == "WRITES" { inWrites = true; continue }
            guard inWrites else { continue }
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if fields.count >= 2 { states[String(fields[1]), default: 0] += 1 }
        }
        return states
    }

    /// Starts `args`, polls the journal, and SIGKILLs the process once run `id` has at
    /// least `threshold` done writes. Returns the done count seen at the kill.
    func kill(_ cli: CLIHarness, _ args: [String], runID id: String, atDone threshold: Int,
              file: StaticString = #filePath, line: UInt = #line) throws -> Int {
        let (p, out, err) = cli.process(args)
        // Drain the pipes so the child never blocks on a full one.
        out.fileHandleForReading.readabilityHandler = { _ = $0.availableData }
        err.fileHandleForReading.readabilityHandler = { _ = $0.availableData }
        defer {
            out.fileHandleForReading.readabilityHandler = nil
            err.fileHandleForReading.readabilityHandler = nil
        }
        try p.run()
        let deadline = Date().addingTimeInterval(30)
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
        return done
    }

    func testKilledThreeTimesThenResumedMakesEachGrantExactlyOnce() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.resetSandbox(users: 500)
        let recipe = try cli.file("grant-many.lua", Self.recipe)
        let id = "run_kill_test"

        // The users the run must reach: the first 300 active ones, newest first.
        let expectedUsers: [String]
        do {
            let reader = try cli.sandbox()
            expectedUsers = Array(try reader.all("/users", "status=active").compactMap { $0.string("id") }.prefix(300))
            XCTAssertEqual(expectedUsers.count, 300, "the seed must have 300 active users")
            XCTAssertEqual(try reader.all("/entitlements", "application_id=app_hub&include_inactive=true").count, 0)
        }

        var killedAt: [Int] = []
        killedAt.append(try kill(cli, [recipe, "--param", "pause_ms=15", "--run-id", id, "--json"], runID: id, atDone: 50))
        killedAt.append(try kill(cli, ["runs", "resume", id, "--json"], runID: id, atDone: 150))
        killedAt.append(try kill(cli, ["runs", "resume", id, "--json"], runID: id, atDone: 250))
        for (n, (done, target)) in zip(killedAt, [50, 150, 250]).enumerated() {
            XCTAssertTrue((target..<(target + 40)).contains(done), "kill \(n + 1) at \(done) done writes, aimed at \(target)")
        }
        XCTAssertEqual(killedAt.sorted(), killedAt, "each resume got further: \(killedAt)")

        // Resume until it succeeds (once should do).
        var final: CLIHarness.Result?
        for _ in 0..<3 {
            let r = try cli.run(["runs", "resume", id])
            final = r
            if r.status == 0 { break }
        }
        XCTAssertEqual(final?.status, 0, final?.output ?? "")
        XCTAssertTrue(final?.stdout.contains("granted app_hub to 300 users") == true, final?.output ?? "")

        // The journal: 300 done writes, nothing pending or failed.
        let states = try writeStates(cli, id)
        XCTAssertEqual(states, ["done": 300], "journal write states after the final resume")
        let show = try cli.run(["runs", "show", id], expect: 0)
        XCTAssertTrue(show.stdout.contains("mode      run, succeeded, attempts 4"), show.stdout)

        // The Hub: each grant exactly once, with one audit event each.
        let reader = try cli.sandbox()
        let entitlements = try reader.all("/entitlements", "application_id=app_hub&include_inactive=true")
        XCTAssertEqual(entitlements.count, 300, "entitlements for app_hub")
        XCTAssertEqual(Set(entitlements.compactMap { $0.string("user_id") }), Set(expectedUsers))
        XCTAssertTrue(entitlements.allSatisfy { $0.string("status") == "active" && $0.string("source") == "admin_grant" })
        let events = try reader.all("/audit-events", "action=entitlement.granted&application_id=app_hub")
        XCTAssertEqual(events.count, 300, "entitlement.granted audit events for app_hub")
        XCTAssertEqual(Set(events.compactMap { $0.string("target_user_id") }), Set(expectedUsers))
    }
}
