import Foundation
import XCTest

/// A resumed run tells the truth (docs/design.md "Idempotency, the journal, resume"),
/// through the CLI: it is served the reads its killed or stopped passes made, so its
/// report and exports are those of a run that never stopped; a run that succeeded is not
/// run again; a stopped run keeps what its exports wrote, marked incomplete; `runs show`
/// lists the run's writes in order with headings.
final class ResumeTruthCLITests: XCTestCase {
    /// Grants app_crm to the first `count` active users who lack it, one report row each.
    static let grantReport = """
        recipe {
          name = "grant-report",
          params = { count = { type = "integer", default = 6 } },
          needs = { "users.list", "entitlements.manage" },
        }
        local held = {}
        for e in hub.entitlements.list { application_id = "app_crm" } do held[e.user_id] = true end
        local users = hub.users.list { status = "active" }
        local n = 0
        local report = export.csv("report.csv", function()
          if n >= params.count then return nil end
          local u = users()
          if u == nil then return nil end
          n = n + 1
          if held[u.id] then return { row = n, user = u.id, outcome = "already held" } end
          hub.entitlements.grant(u.id, { application_id = "app_crm" })
          return { row = n, user = u.id, outcome = "granted" }
        end, { columns = { "row", "user", "outcome" } })
        print(("report: %d rows"):format(report.rows))
        """

    func read(_ url: URL) throws -> String { try String(contentsOf: url, encoding: .utf8) }

    // MARK: A run that succeeded

    func testResumingARunThatSucceededSaysSoAndRewritesNothing() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.resetSandbox()
        let recipe = try cli.file("grant-report.lua", Self.grantReport)
        try cli.run([recipe, "--param", "count=3", "--run-id", "run_done"], expect: 0)
        let folder = cli.stateDir.appendingPathComponent("runs/run_done")
        let report = folder.appendingPathComponent("report.csv")
        let before = try read(report)
        let modified = try FileManager.default.attributesOfItem(atPath: report.path)[.modificationDate] as? Date
        let grants = try cli.sandbox().all("/audit-events", "action=entitlement.granted").count
        let finished = try XCTUnwrap(try cli.json(["runs", "show", "run_done", "--json"])["finished_at"] as? String)

        let expected = """
            run run_done succeeded (finished \(finished)); there is nothing to resume, and nothing was run; its \
            exports are unchanged in \(folder.path). To run the recipe again, start a new run (without --run-id).

            """
        for args in [["runs", "resume", "run_done"], [recipe, "--param", "count=3", "--run-id", "run_done"]] {
            let again = try cli.run(args, expect: 0)
            XCTAssertTrue(again.stderr.hasSuffix(expected), "\(args): \(again.stderr)")
            XCTAssertFalse(again.stderr.contains("started (attempt 2)"), again.stderr)
            XCTAssertEqual(again.stdout, "")
        }
        let json = try cli.run(["runs", "resume", "run_done", "--json"], expect: 0)
        let events = json.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        XCTAssertEqual(events.map { $0["type"] as? String }, ["warning", "summary"], json.stdout)
        XCTAssertEqual(events.last?["nothing_to_resume"] as? Bool, true)
        XCTAssertEqual(events.last?["exit_code"] as? Int, 0)
        XCTAssertEqual(events.last?["run_id"] as? String, "run_done")

        XCTAssertEqual(try read(report), before, "the export is not rewritten")
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: report.path)[.modificationDate] as? Date, modified)
        XCTAssertEqual(try cli.sandbox().all("/audit-events", "action=entitlement.granted").count, grants, "nothing sent")
        XCTAssertEqual(try cli.json(["runs", "show", "run_done", "--json"])["attempts"] as? Int, 1)
    }

    // MARK: A stopped run keeps its exports

    func testAStoppedRunKeepsItsExportMarkedIncompleteAndTheResumeCompletesIt() throws {
        // The report of a run that never stopped, on a Hub of its own.
        let whole = try CLIHarness(testCase: self)
        try whole.resetSandbox()
        try whole.run([try whole.file("grant-report.lua", Self.grantReport), "--run-id", "run_whole"], expect: 0)
        let wholeReport = try read(whole.stateDir.appendingPathComponent("runs/run_whole/report.csv"))

        let cli = try CLIHarness(testCase: self)
        try cli.resetSandbox()
        let recipe = try cli.file("grant-report.lua", Self.grantReport)
        let stopped = try cli.run([recipe, "--max-writes", "2", "--run-id", "run_part"], expect: 4)
        let folder = cli.stateDir.appendingPathComponent("runs/run_part")
        let kept = folder.appendingPathComponent("report.csv.incomplete")
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent("report.csv").path))
        let partial = try read(kept)
        let rows = partial.split(separator: "\r\n").count - 1
        XCTAssertGreaterThanOrEqual(rows, 2, partial)
        XCTAssertTrue(wholeReport.hasPrefix(partial), "the rows written so far, as the whole report has them:\n\(partial)")
        XCTAssertTrue(stopped.stderr.contains("""
            kept incomplete: report.csv.incomplete (\(rows) rows) in \(folder.path) (the run stopped before finishing \
            them; a resume writes them whole)

            """), stopped.stderr)
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: kept.path)[.posixPermissions] as? Int, 0o600)
        let json = try cli.json(["runs", "show", "run_part", "--json"])
        XCTAssertEqual(json["status"] as? String, "stopped")
        let recorded = try XCTUnwrap(json["reads_recorded"] as? Int)
        XCTAssertGreaterThan(recorded, 0)
        let bytes = try XCTUnwrap(json["reads_recorded_bytes"] as? Int)
        let show = try cli.run(["runs", "show", "run_part"], expect: 0)
        XCTAssertTrue(show.stdout.contains("\nrecord    \(recorded) reads recorded (\(bytes) bytes): a resume is served them\n"),
                      show.stdout)

        let resumed = try cli.run(["runs", "resume", "run_part", "--max-writes", "100", "--json"], expect: 0)
        let summary = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data((resumed.stdout.split(separator: "\n").last ?? "").utf8))
                                    as? [String: Any])
        XCTAssertEqual((summary["exports"] as? [[String: Any]])?.map { $0["name"] as? String }, ["report.csv"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: kept.path), "the incomplete copy goes once the export is whole")
        let completed = try read(folder.appendingPathComponent("report.csv"))
        // Both sandboxes hold the same seeded users: the reports are equal byte for byte.
        XCTAssertEqual(completed, wholeReport)
        XCTAssertEqual(try cli.json(["runs", "show", "run_part", "--json"])["reads_recorded"] as? Int, 0,
                       "a run that succeeded keeps no record")
        XCTAssertFalse(try cli.run(["runs", "show", "run_part"], expect: 0).stdout.contains("\nrecord "))
    }

    // MARK: runs show

    func testRunsShowListsTheWholeRunInOrderWithHeadings() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.resetSandbox()
        let recipe = try cli.file("grant-report.lua", Self.grantReport)
        try cli.run([recipe, "--max-writes", "2", "--run-id", "run_shown"], expect: 4)
        try cli.run(["runs", "resume", "run_shown", "--max-writes", "4"], expect: 4)
        try cli.run(["runs", "resume", "run_shown", "--max-writes", "100"], expect: 0)
        let show = try cli.run(["runs", "show", "run_shown"], expect: 0)
        let lines = show.stdout.components(separatedBy: "\n")
        let start = try XCTUnwrap(lines.firstIndex(of: "WRITES (every pass, in the order the run first made them)"), show.stdout)
        XCTAssertEqual(lines[start + 1], "  # STATE    TRIES METHOD  PATH  KEY")
        let writes = lines[(start + 2)...].filter { !$0.isEmpty }
        let granted = try read(cli.stateDir.appendingPathComponent("runs/run_shown/report.csv"))
            .split(separator: "\r\n").filter { $0.hasSuffix(",granted") }
            .map { "/users/" + $0.split(separator: ",")[1] + "/entitlements" }
        XCTAssertEqual(writes.count, granted.count, show.stdout)
        for (index, line) in writes.enumerated() {
            let fields = line.split(separator: " ").map(String.init)
            XCTAssertEqual(fields[0], String(index + 1), line)
            XCTAssertEqual(fields[1], "done", line)
            XCTAssertEqual(fields[2], "1", line)
            XCTAssertEqual(fields[3], "POST", line)
            XCTAssertEqual(fields[4], granted[index], "write \(index + 1) in the order the report granted")
        }
        let json = try cli.json(["runs", "show", "run_shown", "--json"])
        let listed = try XCTUnwrap(json["writes_journalled"] as? [[String: Any]])
        XCTAssertEqual(listed.map { $0["order"] as? Int }, Array(1...granted.count).map { Optional($0) })
        XCTAssertEqual(listed.map { $0["path"] as? String }, granted.map { Optional($0) })
    }

    // MARK: kill -9 and resume: the same report

    /// Twenty rows of the sandbox's users who lack app_crm, found in the first page the
    /// recipe's directory reads.
    func bulkGrantFile(_ cli: CLIHarness, reader: SandboxReader) throws -> String {
        let holders = Set(try reader.all("/entitlements", "application_id=app_crm").compactMap { $0.string("user_id") })
        let users = try reader.all("/users").prefix(100)
            .filter { $0.string("status") == "active" && !holders.contains($0.string("id") ?? "") }
            .compactMap { $0.string("email") }
        XCTAssertGreaterThanOrEqual(users.count, 20)
        return try cli.file("bulk.csv", (["email"] + users.prefix(20)).joined(separator: "\n") + "\n")
    }

    /// The shipped bulk grant over 20 rows, killed with SIGKILL while a grant is in flight
    /// after 4, 9 and 14 grants and resumed each time: the final pass prints the same
    /// report (every row `granted`, none `already held`) and writes the same CSV as a run
    /// that never stopped, reading nothing from the Hub for the part already done.
    func testABulkGrantKilledAtSeveralPointsReportsAsARunThatNeverStopped() throws {
        let cli = try CLIHarness(testCase: self)
        let bulkGrant = CLIHarness.repoRoot.appendingPathComponent("recipes/bulk-grant.lua").path

        // The uninterrupted run, on a fresh sandbox.
        let wholeState = cli.root.appendingPathComponent("whole-hub")
        try cli.resetSandbox(state: wholeState)
        let wholeServer = try ServedSandbox(cli, state: wholeState, faults: "latency=1ms")
        let file = try bulkGrantFile(cli, reader: try SandboxReader(served: wholeServer.url))
        let args = [bulkGrant, "--param", "file=\(file)", "--param", "app=app_crm"]
        let whole = try cli.run(args + ["--config", wholeServer.config, "--run-id", "run_whole"], expect: 0)
        wholeServer.stop()
        XCTAssertTrue(whole.stdout.contains("bulk-grant app_crm: 20 granted, 0 already held"), whole.stdout)
        let wholeCSV = try read(cli.stateDir.appendingPathComponent("runs/run_whole/bulk-grant-report.csv"))

        // The same seed, served slowly enough to kill while a grant is in flight.
        let hubState = cli.root.appendingPathComponent("hub")
        try cli.resetSandbox(state: hubState)
        let server = try ServedSandbox(cli, state: hubState, faults: "latency=80ms")
        defer { server.stop() }
        let id = "run_bulk_killed"
        let extra = ["--config", server.config]
        let reader = try SandboxReader(served: server.url)
        let grantEvents = "action=entitlement.granted&application_id=app_crm"
        let baseline = try reader.all("/audit-events", grantEvents).count
        var trials: [KillTrial] = []
        trials.append(KillTrial(states: try cli.killOnPending(args + extra + ["--run-id", id], runID: id, atDone: 4),
                                received: 0, server: "the Hub"))
        for threshold in [9, 14] {
            trials.append(KillTrial(states: try cli.killOnPending(["runs", "resume", id] + extra, runID: id, atDone: threshold),
                                    received: 0, server: "the Hub"))
        }
        // A kill in the middle of a grant leaves its key in flight at the Hub for about a
        // second (idempotency_key_in_flight): resume until it succeeds, as a user would.
        var final = try cli.run(["runs", "resume", id, "--json"] + extra)
        var passes = 0
        while final.status != 0 && final.output.contains("idempotency_key_in_flight") && passes < 5 {
            sleep(1)
            final = try cli.run(["runs", "resume", id, "--json"] + extra)
            passes += 1
        }
        XCTAssertEqual(final.status, 0, "\(final.output) (trials: \(trials))")
        let events = final.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let printed = events.filter { $0["type"] as? String == "print" }.compactMap { $0["text"] as? String }
        XCTAssertEqual(printed.joined(separator: "\n") + "\n", whole.stdout, "the same lines as the run that never stopped")
        let summary = try XCTUnwrap(events.last)
        XCTAssertEqual(summary["reads"] as? Int, 0, "the Hub is not read again for the rows already done")
        XCTAssertGreaterThan(summary["reads_replayed"] as? Int ?? 0, 0)
        let csv = try read(cli.stateDir.appendingPathComponent("runs/\(id)/bulk-grant-report.csv"))
        XCTAssertEqual(Self.withoutEntitlementIDs(csv), Self.withoutEntitlementIDs(wholeCSV))
        XCTAssertEqual(try cli.writeStates(id), ["done": 20])
        XCTAssertEqual(try reader.all("/audit-events", grantEvents).count - baseline, 20, "each grant made once")
    }

    /// The report with each entitlement id replaced by its order of appearance (the
    /// Hub makes new ids at random).
    static func withoutEntitlementIDs(_ text: String) -> String {
        var names: [String: String] = [:]
        var out = ""
        var rest = Substring(text)
        while let range = rest.range(of: #"ent_[A-Za-z0-9]+"#, options: .regularExpression) {
            out += rest[..<range.lowerBound]
            let id = String(rest[range])
            if names[id] == nil { names[id] = "ent_\(names.count + 1)" }
            out += names[id]!
            rest = rest[range.upperBound...]
        }
        return out + rest
    }
}
