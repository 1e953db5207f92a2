import Foundation
import HTTPKit
import HubSandbox
import XCTest

/// The shipped recipes (recipes/*.lua), run end to end: the built `hubscript` binary
/// against the built-in sandbox Hub in a fresh state directory per test, from the
/// repository root. The Hub's state afterwards is read straight from the sandbox's
/// SQLite file with the jobs key.
final class RecipeTests: XCTestCase {
    // MARK: Running hubscript

    struct Run {
        let status: Int32
        let stdout: String
        let stderr: String
        var lines: [String] { stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).filter { !$0.isEmpty } }
        var all: String { "stdout:\n\(stdout)\nstderr:\n\(stderr)" }

        /// With `--json`: the NDJSON events.
        var events: [[String: Any]] {
            lines.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
        }
        /// With `--json`: the texts of the `print` events.
        var printed: [String] { events.filter { $0["type"] as? String == "print" }.compactMap { $0["text"] as? String } }
        /// With `--json`: the `summary` event.
        var summary: [String: Any]? { events.last { $0["type"] as? String == "summary" } }
    }

    static let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    var scratch: URL!
    var stateDir: URL { scratch.appendingPathComponent("state", isDirectory: true) }
    var outDir: URL { scratch.appendingPathComponent("out", isDirectory: true) }

    override func setUpWithError() throws {
        scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("hubscript-recipe-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: scratch.appendingPathComponent("home"), withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        if let scratch { try? FileManager.default.removeItem(at: scratch) }
    }

    /// Runs `hubscript ARGS --state-dir <fresh>` from the repository root, with no
    /// configuration file in reach (so the built-in sandbox is used).
    func hubscript(_ args: [String], state: Bool = true) throws -> Run {
        try CLIHarness.requireBinary()
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HUBSCRIPT_") }
        env["HOME"] = scratch.appendingPathComponent("home").path
        env["XDG_CONFIG_HOME"] = scratch.appendingPathComponent("home/.config").path
        env["XDG_STATE_HOME"] = scratch.appendingPathComponent("home/.state").path
        let process = CLIHarness.process(args + (state ? ["--state-dir", stateDir.path] : []), in: Self.repoRoot,
                                               environment: env)
        let done = try CLIHarness.collect(process)
        return Run(status: done.status, stdout: String(decoding: done.stdout, as: UTF8.self),
                   stderr: String(decoding: done.stderr, as: UTF8.self))
    }

    func exported(_ name: String) throws -> String {
        String(decoding: try Data(contentsOf: outDir.appendingPathComponent(name)), as: UTF8.self)
    }

    // MARK: Reading the sandbox's state

    /// The sandbox hubscript used, opened on its SQLite file (already seeded).
    func sandbox() throws -> HubSandbox {
        let file = stateDir.appendingPathComponent("sandbox/hub.sqlite")
        XCTAssertTrue(FileManager.default.fileExists(atPath: file.path), "no sandbox at \(file.path)")
        return try HubSandbox(options: SandboxOptions(storage: .file(file), rateLimits: .off))
    }

    /// GET with the jobs key; the decoded JSON object.
    func get(_ hub: HubSandbox, _ target: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        var headers = HTTPHeaders()
        headers.add("Substratal-Version", "1")
        headers.add("Authorization", "Bearer satk_test_jobs_sandbox_0000000000000000")
        let response = hub.handle(HTTPRequestMessage(method: "GET", target: target, headers: headers))
        XCTAssertEqual(response.status, 200, "GET \(target): \(String(decoding: response.body, as: UTF8.self))", file: file, line: line)
        return (try JSONSerialization.jsonObject(with: response.body)) as? [String: Any] ?? [:]
    }

    /// Every item of a list endpoint, following the cursors. `query` is already encoded.
    func list(_ hub: HubSandbox, _ path: String, _ query: String = "", file: StaticString = #filePath, line: UInt = #line) throws -> [[String: Any]] {
        var items: [[String: Any]] = []
        var cursor: String?
        repeat {
            var target = "\(path)?limit=100" + (query.isEmpty ? "" : "&\(query)")
            if let c = cursor { target += "&cursor=" + (c.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? c) }
            let page = try get(hub, target, file: file, line: line)
            items += page["data"] as? [[String: Any]] ?? []
            cursor = (page["page"] as? [String: Any])?["next_cursor"] as? String
        } while cursor != nil
        return items
    }

    /// Whether an audit event comes from the sandbox's seed rather than from a run.
    static func seeded(_ event: [String: Any]) -> Bool {
        (event["request_id"] as? String)?.hasPrefix("req_seed_") == true
    }

    // MARK: offboard

    func testOffboardTwiceChangesNothingTheSecondTime() throws {
        let first = try hubscript(["run", "recipes/offboard.lua", "--param", "user=ada@example.com", "--json", "--out", outDir.path])
        XCTAssertEqual(first.status, 0, first.all)
        XCTAssertEqual(first.printed, [
            "offboarded ada@example.com (usr_ada)",
            "  suspended: yes",
            "  entitlements revoked: 5, roles removed: 1, sessions revoked: 2",
            "  API keys revoked: 1, organizations left: 1",
            "  audit trail: 16 events in usr_ada-audit.jsonl",
        ], first.all)
        XCTAssertEqual(first.summary?["status"] as? String, "ok", first.all)
        XCTAssertEqual(first.summary?["writes"] as? Int, 11, first.all)

        let second = try hubscript(["run", "recipes/offboard.lua", "--param", "user=usr_ada", "--json"])
        XCTAssertEqual(second.status, 0, second.all)
        XCTAssertEqual(second.summary?["writes"] as? Int, 0, second.all)
        XCTAssertEqual(second.summary?["failed"] as? Int, 0, second.all)
        XCTAssertEqual(Array(second.printed.dropLast()), [
            "offboarded ada@example.com (usr_ada)",
            "  suspended: already",
            "  entitlements revoked: 0, roles removed: 0, sessions revoked: 0",
            "  API keys revoked: 0, organizations left: 0",
        ], second.all)

        // A suspended user is not granted anything by bulk-grant unless asked.
        let csv = scratch.appendingPathComponent("ada.csv")
        try Data("id\nusr_ada\n".utf8).write(to: csv)
        let grant = try hubscript(["run", "recipes/bulk-grant.lua", "--param", "file=\(csv.path)", "--param", "app=app_chat"])
        XCTAssertEqual(grant.status, 0, grant.all)
        XCTAssertEqual(grant.lines.first, "row 1 usr_ada: skipped: user is suspended", grant.all)

        let hub = try sandbox()
        XCTAssertEqual(try get(hub, "/users/usr_ada")["status"] as? String, "suspended")
        XCTAssertEqual(try list(hub, "/users/usr_ada/entitlements").map { $0["id"] as? String }, [],
                       "no live entitlement left")
        let revoked = try list(hub, "/entitlements", "user_id=usr_ada&include_inactive=true")
        XCTAssertEqual(revoked.count, 6)
        XCTAssertTrue(revoked.allSatisfy { $0["status"] as? String == "revoked" }, "\(revoked)")
        let roles = try list(hub, "/users/usr_ada/roles")
        XCTAssertEqual(roles.map { $0["role_id"] as? String }, ["role_member"])
        XCTAssertEqual(roles.first?["implicit"] as? Bool, true)
        XCTAssertEqual(try list(hub, "/users/usr_ada/sessions").count, 0, "no live session")
        XCTAssertEqual(try list(hub, "/api-keys", "owner_user_id=usr_ada").count, 0, "no live API key")
        for org in try list(hub, "/organizations") {
            let id = try XCTUnwrap(org["id"] as? String)
            let members = try list(hub, "/organizations/\(id)/members").compactMap { $0["user_id"] as? String }
            XCTAssertFalse(members.contains("usr_ada"), "ada is still a member of \(id)")
        }
        let changes = try list(hub, "/audit-events", "target_user_id=usr_ada&since=2020-01-01T00:00:00Z").filter { !Self.seeded($0) }
        XCTAssertEqual(changes.count, 11, "one event per write of the first run, none from the second or from bulk-grant")
        // The trail the first run exported: ada's seeded events plus one per write (11).
        let trail = try exported("usr_ada-audit.jsonl").split(separator: "\n")
        XCTAssertEqual(trail.count, 16)
    }

    // MARK: bulk-grant

    func testBulkGrantReportsEveryRowAndSecondRunGrantsNothing() throws {
        let csv = scratch.appendingPathComponent("users.csv")
        // BOM, CRLF, quoted fields (a comma, doubled quotes), a blank line, "Email" capitalised.
        let text = "\u{FEFF}user_id,Email,note\r\n"
            + "usr_support,,\"by id\"\r\n"
            + ",admin@example.com,\"by email, quoted\"\r\n"
            + ",ada@example.com,holds app_wiki already\r\n"
            + ",nobody@example.com,unknown\r\n"
            + "\r\n"
            + "usr_support,,\"a \"\"duplicate\"\" row\"\r\n"
            + "usr_ada,someone.else@example.com,the id wins\r\n"
            + ",Support@Example.com,capitalised\r\n"
        try Data(text.utf8).write(to: csv)
        let args = ["run", "recipes/bulk-grant.lua", "--param", "file=\(csv.path)", "--param", "app=app_wiki"]

        let first = try hubscript(args + ["--out", outDir.path])
        XCTAssertEqual(first.status, 0, first.all)
        XCTAssertEqual(first.lines, [
            "row 1 usr_support: granted",
            "row 2 admin@example.com (usr_admin): granted",
            "row 3 ada@example.com (usr_ada): already held",
            "row 4 nobody@example.com: not found",
            "row 5 usr_support: already held",
            "row 6 usr_ada: already held",
            "row 7 Support@Example.com (usr_support): already held",
            "bulk-grant app_wiki: 2 granted, 4 already held, 1 not found, 0 skipped, 0 errors (7 rows)",
            "report: bulk-grant-report.csv (7 rows)",
        ], first.all)

        let report = try exported("bulk-grant-report.csv").components(separatedBy: "\r\n")
        XCTAssertEqual(report.first, "row,input,user_id,email,user_status,outcome,entitlement_id,error_code,message")
        XCTAssertEqual(report.count, 9, "header, 7 rows, final CRLF: \(report)")
        XCTAssertEqual(report[3], "3,ada@example.com,usr_ada,ada@example.com,active,already held,ent_ada_wiki,,")
        XCTAssertEqual(report[4], "4,nobody@example.com,,,,not found,,,")
        XCTAssertTrue(report[1].hasPrefix("1,usr_support,usr_support,support@example.com,active,granted,ent_"), report[1])

        let second = try hubscript(args + ["--json"])
        XCTAssertEqual(second.status, 0, second.all)
        XCTAssertEqual(second.summary?["writes"] as? Int, 0, second.all)
        XCTAssertEqual(second.printed.filter { $0.hasSuffix(": granted") }, [], second.all)
        XCTAssertEqual(second.printed.last(where: { $0.hasPrefix("bulk-grant ") }),
                       "bulk-grant app_wiki: 0 granted, 6 already held, 1 not found, 0 skipped, 0 errors (7 rows)", second.all)

        // A row without an identifier fails alone; the run then exits 1.
        let bad = scratch.appendingPathComponent("bad.csv")
        try Data("email\n\"\"\nsupport@example.com\n".utf8).write(to: bad)
        let failed = try hubscript(["run", "recipes/bulk-grant.lua", "--param", "file=\(bad.path)", "--param", "app=app_crm"])
        XCTAssertEqual(failed.status, 1, failed.all)
        XCTAssertEqual(failed.lines, [
            "row 1 (no id or email): error: missing_identifier",
            "row 2 support@example.com (usr_support): granted",
            "bulk-grant app_crm: 1 granted, 0 already held, 0 not found, 0 skipped, 1 errors (2 rows)",
            "report: bulk-grant-report.csv (2 rows)",
        ], failed.all)
        XCTAssertTrue(failed.stderr.contains("error: 1 of 2 rows failed; see bulk-grant-report.csv"), failed.all)

        let unknownApp = try hubscript(["run", "recipes/bulk-grant.lua", "--param", "file=\(bad.path)", "--param", "app=app_nope"])
        XCTAssertEqual(unknownApp.status, 1, unknownApp.all)
        XCTAssertTrue(unknownApp.stderr.contains("error: unknown application 'app_nope'"), unknownApp.all)

        let hub = try sandbox()
        for user in ["usr_support", "usr_admin"] {
            let live = try list(hub, "/users/\(user)/entitlements", "application_id=app_wiki")
            XCTAssertEqual(live.count, 1, "\(user): \(live)")
            XCTAssertEqual(live.first?["status"] as? String, "active")
            XCTAssertEqual(live.first?["source"] as? String, "admin_grant")
        }
        XCTAssertEqual(try list(hub, "/users/usr_ada/entitlements", "application_id=app_wiki").map { $0["id"] as? String },
                       ["ent_ada_wiki"])
        XCTAssertEqual(try list(hub, "/users/usr_support/entitlements", "application_id=app_crm").count, 1)
        XCTAssertEqual(try list(hub, "/audit-events", "action=entitlement.granted&since=2020-01-01T00:00:00Z")
            .filter { !Self.seeded($0) && ["usr_support", "usr_admin"].contains($0["target_user_id"] as? String) }.count, 3,
                       "exactly one grant event per granted row, over all runs")
    }

    /// Users and the app's entitlements come from paged lists, so a granted
    /// row costs about one request (its grant) and a held row almost none; a small file
    /// against a larger directory reads one page, then looks rows up one by one.
    func testBulkGrantSpendsAboutOneRequestPerGrantAndAlmostNoneOnHeldRows() throws {
        XCTAssertEqual(try hubscript(["sandbox", "reset", "--users", "600"]).status, 0)
        let users = try list(try sandbox(), "/users", "status=active").compactMap { $0["email"] as? String }
            .filter { $0 != "ada@example.com" }
        XCTAssertGreaterThanOrEqual(users.count, 400)
        let rows = Array(users.prefix(300))
        let csv = scratch.appendingPathComponent("many.csv")
        // Capitalised emails are matched too (spreadsheets do that).
        try Data((["Email"] + rows.enumerated().map { $0.offset % 7 == 0 ? $0.element.uppercased() : $0.element })
            .joined(separator: "\n").utf8).write(to: csv)
        let args = ["run", "recipes/bulk-grant.lua", "--param", "file=\(csv.path)", "--param", "app=app_crm", "--json"]
        let first = try hubscript(args)
        XCTAssertEqual(first.status, 0, first.all)
        let granted = first.printed.filter { $0.hasSuffix(": granted") }.count
        let firstReads = try XCTUnwrap(first.summary?["reads"] as? Int), firstWrites = try XCTUnwrap(first.summary?["writes"] as? Int)
        XCTAssertGreaterThan(granted, 200, first.all)
        XCTAssertEqual(firstWrites, granted)
        XCTAssertLessThanOrEqual(Double(firstReads + firstWrites) / Double(granted), 1.05,
                                 "\(firstReads) reads and \(firstWrites) writes for \(granted) grants")
        let second = try hubscript(args)
        XCTAssertEqual(second.status, 0, second.all)
        XCTAssertEqual(second.summary?["writes"] as? Int, 0, second.all)
        XCTAssertEqual(second.printed.last { $0.hasPrefix("bulk-grant ") },
                       "bulk-grant app_crm: 0 granted, 300 already held, 0 not found, 0 skipped, 0 errors (300 rows)")
        let secondReads = try XCTUnwrap(second.summary?["reads"] as? Int)
        XCTAssertLessThanOrEqual(Double(secondReads) / 300, 0.05, "\(secondReads) reads for 300 held rows")

        // Three rows: a budget of one page (100 users of 600), the rest looked up one by one.
        let few = scratch.appendingPathComponent("few.csv")
        try Data("email\n\(users[users.count - 1])\nNobody@Example.com\n\(users[0].uppercased())\n".utf8).write(to: few)
        let small = try hubscript(["run", "recipes/bulk-grant.lua", "--param", "file=\(few.path)", "--param", "app=app_wiki"])
        XCTAssertEqual(small.status, 0, small.all)
        XCTAssertEqual(small.lines.filter { $0.hasPrefix("bulk-grant ") },
                       ["bulk-grant app_wiki: 2 granted, 0 already held, 1 not found, 0 skipped, 0 errors (3 rows)"], small.all)
    }

    /// A run stopped by its write limit and resumed grants every user exactly once.
    func testBulkGrantResumedAfterAStopGrantsEachUserOnce() throws {
        let csv = scratch.appendingPathComponent("three.csv")
        try Data("id\nusr_ada\nusr_support\nusr_admin\n".utf8).write(to: csv)
        let plan = try hubscript(["plan", "recipes/bulk-grant.lua", "--param", "file=\(csv.path)", "--param", "app=app_chat"])
        XCTAssertEqual(plan.status, 0, plan.all)
        XCTAssertEqual(Array(plan.lines.prefix(3)), [
            "row 1 usr_ada: granted (planned)", "row 2 usr_support: granted (planned)", "row 3 usr_admin: granted (planned)",
        ], plan.all)
        XCTAssertTrue(plan.stderr.contains("3 writes planned"), plan.all)

        let stopped = try hubscript(["run", "recipes/bulk-grant.lua", "--param", "file=\(csv.path)", "--param", "app=app_chat",
                                     "--max-writes", "1", "--json"])
        XCTAssertEqual(stopped.status, 4, stopped.all)
        XCTAssertEqual(stopped.printed, ["row 1 usr_ada: granted"], stopped.all)
        XCTAssertEqual(stopped.summary?["writes"] as? Int, 1, stopped.all)
        let runID = try XCTUnwrap(stopped.summary?["run_id"] as? String, stopped.all)

        let resumed = try hubscript(["runs", "resume", runID, "--json", "--max-writes", "100"])
        XCTAssertEqual(resumed.status, 0, resumed.all)
        // The resume is served the stopped pass's reads: it decides as a run that never
        // stopped (row 1 is its own grant, replayed, not someone else's).
        XCTAssertEqual(resumed.printed, [
            "row 1 usr_ada: granted",
            "row 2 usr_support: granted",
            "row 3 usr_admin: granted",
            "bulk-grant app_chat: 3 granted, 0 already held, 0 not found, 0 skipped, 0 errors (3 rows)",
            "report: bulk-grant-report.csv (3 rows)",
        ], resumed.all)
        XCTAssertEqual(resumed.summary?["run_id"] as? String, runID)
        XCTAssertEqual(resumed.summary?["writes"] as? Int, 2, resumed.all)
        XCTAssertEqual(resumed.summary?["replayed"] as? Int, 1, resumed.all)

        let hub = try sandbox()
        for user in ["usr_ada", "usr_support", "usr_admin"] {
            XCTAssertEqual(try list(hub, "/users/\(user)/entitlements", "application_id=app_chat").count, 1, user)
        }
        let grants = try list(hub, "/audit-events", "action=entitlement.granted&application_id=app_chat&since=2020-01-01T00:00:00Z")
            .filter { !Self.seeded($0) && ["usr_ada", "usr_support", "usr_admin"].contains($0["target_user_id"] as? String) }
        XCTAssertEqual(grants.count, 3, "one grant each: \(grants)")
    }

    // MARK: audit-export

    func testAuditExportWritesExactlyTheFilteredEvents() throws {
        let jsonl = try hubscript(["run", "recipes/audit-export.lua", "--param", "since=2020-01-01",
                                   "--param", "action=entitlement.revoked,user.suspended", "--out", outDir.path])
        XCTAssertEqual(jsonl.status, 0, jsonl.all)
        let csv = try hubscript(["run", "recipes/audit-export.lua", "--param", "since=2020-01-01T00:00:00Z",
                                 "--param", "until=2100-01-01T00:00:00Z", "--param", "format=csv",
                                 "--param", "user=ada@example.com", "--param", "out=ada.csv", "--out", outDir.path])
        XCTAssertEqual(csv.status, 0, csv.all)

        let hub = try sandbox()
        let revoked = try list(hub, "/audit-events",
                               "since=2020-01-01T00:00:00Z&action=entitlement.revoked&action=user.suspended")
        XCTAssertGreaterThan(revoked.count, 0)
        XCTAssertEqual(jsonl.lines, [
            "exported \(revoked.count) audit events to audit-events.jsonl (jsonl)",
            "  filter: since 2020-01-01T00:00:00Z, action entitlement.revoked|user.suspended",
        ], jsonl.all)
        let lines = try exported("audit-events.jsonl").split(separator: "\n")
        XCTAssertEqual(lines.count, revoked.count)
        let ids = try lines.map { line -> String in
            let event = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            XCTAssertTrue(["entitlement.revoked", "user.suspended"].contains(event["action"] as? String), "\(event)")
            XCTAssertNotNil(event["actor"] as? [String: Any], "nested objects are kept in JSONL")
            return try XCTUnwrap(event["id"] as? String)
        }
        XCTAssertEqual(ids, revoked.compactMap { $0["id"] as? String }, "same events, same order")

        let adas = try list(hub, "/audit-events", "since=2020-01-01T00:00:00Z&until=2100-01-01T00:00:00Z&target_user_id=usr_ada")
        XCTAssertGreaterThan(adas.count, 0)
        XCTAssertEqual(csv.lines, [
            "exported \(adas.count) audit events to ada.csv (csv)",
            "  filter: since 2020-01-01T00:00:00Z, until 2100-01-01T00:00:00Z, target user ada@example.com (usr_ada)",
        ], csv.all)
        let rows = try exported("ada.csv").components(separatedBy: "\r\n").filter { !$0.isEmpty }
        XCTAssertEqual(rows.first, "id,timestamp,action,actor_type,actor_id,target_type,target_id,target_user_id,application_id,organization_id,request_id")
        XCTAssertEqual(rows.count - 1, adas.count)
        let firstEvent = try XCTUnwrap(adas.first)
        let actor = firstEvent["actor"] as? [String: Any]
        XCTAssertTrue(rows[1].hasPrefix("\(firstEvent["id"] as? String ?? "?"),\(firstEvent["timestamp"] as? String ?? "?"),\(firstEvent["action"] as? String ?? "?"),\(actor?["type"] as? String ?? "?"),"), rows[1])

        let badFormat = try hubscript(["run", "recipes/audit-export.lua", "--param", "since=2026-01-01", "--param", "format=xml"])
        XCTAssertEqual(badFormat.status, 1, badFormat.all)
        XCTAssertTrue(badFormat.stderr.contains("error: parameter 'format' must be jsonl or csv, got 'xml'"), badFormat.all)
        let badSince = try hubscript(["run", "recipes/audit-export.lua", "--param", "since=yesterday"])
        XCTAssertEqual(badSince.status, 1, badSince.all)
        XCTAssertTrue(badSince.stderr.contains("error: parameter 'since' must be an ISO 8601 timestamp"), badSince.all)
        let noSince = try hubscript(["run", "recipes/audit-export.lua"])
        XCTAssertEqual(noSince.status, 2, noSince.all)
    }

    // MARK: access-review

    func testAccessReviewListsEveryMembersAccess() throws {
        let run = try hubscript(["run", "recipes/access-review.lua", "--out", outDir.path])
        XCTAssertEqual(run.status, 0, run.all)
        let rows = try exported("access-review-org_acme.csv").components(separatedBy: "\r\n").filter { !$0.isEmpty }
        XCTAssertEqual(rows.first, "user_id,email,display_name,user_status,kind,application_id,role_id,status,source,granted_at,assigned_at")
        let ada = rows.filter { $0.hasPrefix("usr_ada,") }
        XCTAssertEqual(ada.count, 7, ada.joined(separator: "\n"))
        for prefix in [
            "usr_ada,ada@example.com,Ada Lovelace,active,entitlement,app_invoicer,,active,purchase,",
            "usr_ada,ada@example.com,Ada Lovelace,active,entitlement,app_wiki,,active,admin_grant,",
            "usr_ada,ada@example.com,Ada Lovelace,active,entitlement,app_crm,,disabled,admin_grant,",
            "usr_ada,ada@example.com,Ada Lovelace,active,entitlement,app_tickets,,active,org_seat,",
            "usr_ada,ada@example.com,Ada Lovelace,active,entitlement,app_analytics,,expired,trial,",
            "usr_ada,ada@example.com,Ada Lovelace,active,role,,role_billing_admin,assigned,user:",
            "usr_ada,ada@example.com,Ada Lovelace,active,role,,role_member,implicit,system,,",
        ] {
            XCTAssertEqual(ada.filter { $0.hasPrefix(prefix) }.count, 1, "\(prefix) in\n\(ada.joined(separator: "\n"))")
        }
        XCTAssertFalse(ada.contains { $0.contains("app_chat") }, "revoked entitlements are not access")

        let hub = try sandbox()
        let members = try list(hub, "/organizations/org_acme/members")
        let ids = Set(members.compactMap { $0["user_id"] as? String })
        XCTAssertEqual(Set(rows.dropFirst().map { String($0.prefix { $0 != "," }) }), ids, "every member, nobody else")
        XCTAssertEqual(run.lines.first, "access review of org_acme (Acme)", run.all)
        XCTAssertEqual(run.lines.dropFirst().first, "  members: \(members.count)", run.all)
        XCTAssertEqual(run.lines.last, "  report: access-review-org_acme.csv (\(rows.count - 1) rows)", run.all)

        let unknown = try hubscript(["run", "recipes/access-review.lua", "--param", "org=org_nope"])
        XCTAssertEqual(unknown.status, 1, unknown.all)
        XCTAssertTrue(unknown.stderr.contains("error: no organization org_nope is visible to this profile"), unknown.all)
    }

    // MARK: the rest

    func testEveryShippedRecipeChecksAndHelloRuns() throws {
        let check = try hubscript(["check", "recipes/offboard.lua", "recipes/bulk-grant.lua", "recipes/audit-export.lua",
                                   "recipes/access-review.lua", "recipes/examples/hello.lua"], state: false)
        XCTAssertEqual(check.status, 0, check.all)
        XCTAssertTrue(check.stdout.contains("5 passed, 0 failed"), check.all)

        let hello = try hubscript(["run", "recipes/examples/hello.lua", "--param", "name=Ada", "--param", "times=2"])
        XCTAssertEqual(hello.status, 0, hello.all)
        XCTAssertEqual(hello.lines, ["hello, Ada!", "hello, Ada!", #"{"greeted":"Ada","times":2}"#], hello.all)
    }
}
