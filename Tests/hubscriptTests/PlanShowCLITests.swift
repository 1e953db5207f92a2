import Foundation
import XCTest

/// Looking at a plan before it is applied: `plan --out` prints the table it saves,
/// `plan show PLAN.json` prints a saved plan (with its record in the journal), a recipe
/// named show is still a recipe, and a saved plan's exports go beside the plan file.
final class PlanShowCLITests: XCTestCase {
    static let suspendRecipe = """
        recipe {
          name = "suspend-one",
          version = "1.0.0",
          description = "Test fixture: suspend one user and report it.",
          params = { user = { type = "string", required = true } },
          needs = { "users.list", "users.manage" },
        }
        local u = hub.users.get(params.user)
        hub.users.suspend(u.id, { reason = "left" })
        export.csv("report.csv", { { id = u.id, email = u.email } })
        print("suspended " .. u.email)
        """

    var cli: CLIHarness!

    override func setUpWithError() throws {
        try super.setUpWithError()
        cli = try CLIHarness(testCase: self)
        try cli.useSandboxConfiguration()
        try cli.file("suspend.lua", Self.suspendRecipe)
    }

    override func tearDown() {
        cli = nil
        super.tearDown()
    }

    /// The plan table's rows for the suspend fixture (after its title line).
    static let tableRows = """
        #  METHOD  TARGET                  CHANGE
        1  POST    /users/usr_ada/suspend  suspend usr_ada {"reason":"left"}
        1 write planned, 1 read; nothing was sent.

        """

    /// The run id of the plan whose table `text` shows (`Plan run_…: …`).
    static func planID(_ text: String) throws -> String {
        let line = try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix("Plan run_") }, text)
        return String(line.dropFirst("Plan ".count).prefix { $0 != ":" })
    }

    func planID(_ text: String) throws -> String { try Self.planID(text) }

    func testPlanWithOutPrintsTheTableItSaves() throws {
        let r = try cli.run(["plan", "suspend.lua", "--param", "user=ada@example.com", "--out", "p.json"], expect: 0)
        let id = try planID(r.stderr)
        XCTAssertTrue(r.stderrWithoutRunStart.hasPrefix("""
            Plan \(id): suspend.lua, profile sandbox
            \(Self.tableRows)plan saved to p.json: 1 writes; apply it with hubscript apply p.json

            """), r.stderr)
        XCTAssertEqual(r.stdout, "suspended ada@example.com\n")
        XCTAssertTrue(FileManager.default.fileExists(atPath: cli.root.appendingPathComponent("p.json").path))
    }

    func testPlanShowPrintsTheSavedPlanWithItsRecord() throws {
        let r = try cli.run(["plan", "suspend.lua", "--param", "user=ada@example.com", "--out", "p.json"], expect: 0)
        let id = try planID(r.stderr)
        let saved = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: cli.root.appendingPathComponent("p.json"))) as? [String: Any])
        let created = try XCTUnwrap(saved["created_at"] as? String)
        let recipeSHA = try XCTUnwrap((saved["recipe"] as? [String: Any])?["sha256"] as? String)

        let shown = try cli.run(["plan", "show", "p.json"], expect: 0)
        XCTAssertEqual(shown.stderr, "")
        let lines = shown.stdout.components(separatedBy: "\n")
        let content = try XCTUnwrap(lines.first { $0.hasPrefix("  content      sha256:") })
        let maker = try XCTUnwrap(lines.first { $0.hasPrefix("  maker        ") })
        XCTAssertTrue(maker.hasSuffix(" (operating-system user)"), maker)
        let createdShown = try XCTUnwrap(lines.first { $0.hasPrefix("  created      ") })
        XCTAssertEqual(createdShown, "  created      " + created)
        XCTAssertEqual(shown.stdout, """
            plan \(id) in p.json
              recipe       suspend.lua (sha256:\(recipeSHA.prefix(12))…)
              profile      sandbox
              params       {"user":"ada@example.com"}
            \(createdShown)
            \(content)
            \(maker)
              status       approved
              approvals    0 of 0 required

            Plan \(id): suspend.lua, profile sandbox
            \(Self.tableRows)
            """)
    }

    func testPlanShowJSONIsOneObjectWithThePlanAndItsRecord() throws {
        let r = try cli.run(["plan", "suspend.lua", "--param", "user=ada@example.com", "--out", "p.json"], expect: 0)
        let id = try planID(r.stderr)
        let shown = try cli.run(["plan", "show", "p.json", "--json", "--color", "always"], expect: 0)
        XCTAssertEqual(shown.stderr, "")
        XCTAssertFalse(shown.stdout.contains("\u{1B}"), "no colour in --json")
        let lines = shown.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, 1, shown.stdout)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(object["type"] as? String, "plan")
        XCTAssertEqual(object["file"] as? String, "p.json")
        XCTAssertEqual((object["plan"] as? [String: Any])?["run_id"] as? String, id)
        XCTAssertEqual(((object["plan"] as? [String: Any])?["writes"] as? [Any])?.count, 1)
        let record = try XCTUnwrap(object["record"] as? [String: Any])
        XCTAssertEqual(record["status"] as? String, "approved")
        XCTAssertEqual(record["maker_kind"] as? String, "os")
        XCTAssertEqual(record["approvals"] as? Int, 0)
        XCTAssertEqual(record["required"] as? Int, 0)
        XCTAssertEqual(record["recorded_content_sha256"] as? String, object["content_sha256"] as? String)
    }

    func testPlanShowOfAPlanTheJournalDoesNotHoldSaysSo() throws {
        try cli.run(["plan", "suspend.lua", "--param", "user=ada@example.com", "--out", "p.json"], expect: 0)
        let other = cli.root.appendingPathComponent("other-state")
        let shown = try cli.run(["plan", "show", "p.json"], state: other, expect: 0)
        let id = try planID(shown.stdout)
        XCTAssertTrue(shown.stdout.contains("\n  maker        not recorded (the journal holds no plan \(id))\n\nPlan "), shown.stdout)
        XCTAssertFalse(shown.stdout.contains("approvals"), shown.stdout)
    }

    func testPlanShowOfAMissingOrBrokenFileIsAnError() throws {
        let missing = try cli.run(["plan", "show", "nope.json"], expect: 2)
        XCTAssertEqual(missing.stdout, "")
        XCTAssertTrue(missing.stderr.hasPrefix("error: "), missing.stderr)
        try cli.file("broken.json", "{\"format\": 1")
        let broken = try cli.run(["plan", "show", "broken.json", "--json"], expect: 2)
        XCTAssertTrue(broken.stderr.hasPrefix("error: "), broken.stderr)
        let events = broken.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        XCTAssertEqual(events.map { $0["type"] as? String }, ["error", "summary"])
        let none = try cli.run(["plan", "show"], expect: 2)
        XCTAssertEqual(none.stderr, "hubscript plan show: expected one PLAN.json\nRun 'hubscript plan show --help' for usage.\n")
    }

    func testPlanShowAndApplyRefuseAFileLongerThanAnyPlanWithoutReadingIt() throws {
        let path = cli.root.appendingPathComponent("huge.json").path
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: nil))
        XCTAssertEqual(truncate(path, 8 << 30), 0)   // sparse: 8 GiB that take no disk
        let message = "cannot read the plan \(path): it is longer than 1024 MiB, more than a plan file can hold; "
            + "give the file hubscript plan --out wrote"
        let show = try cli.run(["plan", "show", "huge.json"], expect: 2)
        XCTAssertEqual(show.stdout, "")
        XCTAssertEqual(show.stderr, "error: \(message)\n")
        let apply = try cli.run(["apply", "huge.json"], expect: 2)
        XCTAssertEqual(apply.stdout, "")
        XCTAssertEqual(apply.stderr, "error: \(message)\n")
    }

    func testARecipeNamedShowIsStillPlanned() throws {
        try cli.file("show.lua", Self.suspendRecipe)
        let byName = try cli.run(["plan", "show.lua", "--param", "user=ada@example.com"], expect: 0)
        XCTAssertTrue(byName.stderrWithoutRunStart.hasPrefix("Plan run_"), byName.stderr)
        try cli.file("show", Self.suspendRecipe)
        let byPath = try cli.run(["plan", "./show", "--param", "user=ada@example.com"], expect: 0)
        XCTAssertTrue(byPath.stderr.contains(Self.tableRows), byPath.stderr)
        // The bare word is the subcommand; with a file named show here, the error says
        // how to plan it.
        let bare = try cli.run(["plan", "show"], expect: 2)
        XCTAssertEqual(bare.stderr, "hubscript plan show: expected one PLAN.json (to plan the recipe file 'show' here, "
                       + "write hubscript plan ./show)\nRun 'hubscript plan show --help' for usage.\n")
    }

    func testASavedPlansExportsGoBesideThePlanAndTheApplysToTheRunFolder() throws {
        try FileManager.default.createDirectory(at: cli.root.appendingPathComponent("plans"), withIntermediateDirectories: true)
        let r = try cli.run(["plan", "suspend.lua", "--param", "user=ada@example.com", "--out", "plans/suspend.json"], expect: 0)
        let id = try planID(r.stderr)
        let planExports = cli.root.appendingPathComponent("plans/suspend.exports")
        let runFolder = cli.stateDir.appendingPathComponent("runs/\(id)")
        XCTAssertEqual(try String(contentsOf: planExports.appendingPathComponent("report.csv"), encoding: .utf8),
                       "email,id\r\nada@example.com,usr_ada\r\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: runFolder.appendingPathComponent("report.csv").path))
        XCTAssertTrue(r.stderr.contains("exported report.csv (1 rows) to \(planExports.path)\n"), r.stderr)

        let apply = try cli.run(["apply", "plans/suspend.json"], expect: 0)
        XCTAssertTrue(apply.stderr.contains("exported report.csv (1 rows) to \(runFolder.path)\n"), apply.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: runFolder.appendingPathComponent("report.csv").path))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: planExports.path), ["report.csv"])
    }

    func testAPlanWithoutOutExportsToItsRunFolder() throws {
        let r = try cli.run(["plan", "suspend.lua", "--param", "user=ada@example.com"], expect: 0)
        let id = try planID(r.stderr)
        let runFolder = cli.stateDir.appendingPathComponent("runs/\(id)")
        XCTAssertTrue(FileManager.default.fileExists(atPath: runFolder.appendingPathComponent("report.csv").path), r.stderr)
    }

    func testAPlanFileWithoutJSONExtensionGetsExportsBesideItByItsWholeName() throws {
        try cli.run(["plan", "suspend.lua", "--param", "user=ada@example.com", "--out", "saved.plan"], expect: 0)
        XCTAssertTrue(FileManager.default.fileExists(atPath: cli.root.appendingPathComponent("saved.plan.exports/report.csv").path))
    }

    func testPlanShowNeedsNoJournalToShowTheFile() throws {
        try cli.run(["plan", "suspend.lua", "--param", "user=ada@example.com", "--out", "p.json"], expect: 0)
        // A configuration whose journal cannot be opened: the plan is shown, the record is not.
        let config = try cli.file("broken-journal.lua", """
            return { profiles = { sandbox = { sandbox = true } }, journal = "postgresql:///nowhere?host=/nonexistent" }
            """)
        let shown = try cli.run(["plan", "show", "p.json", "--config", config], expect: 0)
        XCTAssertTrue(shown.stdout.contains("\n  maker        unknown: the journal could not be read ("), shown.output)
        XCTAssertTrue(shown.stdout.contains(PlanShowCLITests.tableRows), shown.output)
    }

    func testAPlanFileChangedAfterItWasSavedSaysSoAndShowsItsTextEscaped() throws {
        try cli.run(["plan", "suspend.lua", "--param", "user=ada@example.com", "--out", "p.json"], expect: 0)
        let file = cli.root.appendingPathComponent("p.json")
        var saved = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
        saved["profile"] = "sand\u{1B}[31mbox"
        try JSONSerialization.data(withJSONObject: saved).write(to: file)
        let shown = try cli.run(["plan", "show", "p.json"], expect: 0)
        XCTAssertFalse(shown.stdout.contains("\u{1B}"), shown.stdout)
        XCTAssertTrue(shown.stdout.contains("\n  profile      sand\\e[31mbox\n"), shown.stdout)
        XCTAssertTrue(shown.stdout.contains("\n  changed      the file was changed after it was saved (recorded sha256:"), shown.stdout)
    }

    func testAPlanThatNeedsApprovalShowsItWaiting() throws {
        cli.extraEnvironment["HUBSCRIPT_CONFIG"] = try cli.file("approvals.lua", """
            return { profiles = { sandbox = { sandbox = true } }, approvals = { required = 1 } }
            """)
        try cli.run(["plan", "suspend.lua", "--param", "user=ada@example.com", "--out", "p.json"], expect: 0)
        let shown = try cli.run(["plan", "show", "p.json"], expect: 0)
        XCTAssertTrue(shown.stdout.contains("\n  status       waiting\n  approvals    0 of 1 required\n\nPlan "), shown.stdout)
        let json = try cli.run(["plan", "show", "p.json", "--json"], expect: 0)
        let record = try XCTUnwrap((JSONLines.objects(json.stdout).first?["record"]) as? [String: Any])
        XCTAssertEqual(record["status"] as? String, "waiting")
        XCTAssertEqual(record["required"] as? Int, 1)
    }
}
