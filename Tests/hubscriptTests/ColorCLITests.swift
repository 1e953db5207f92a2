import Foundation
import XCTest

/// Colour for people: errors, warnings, `FAIL`, `ok` and plan tables are painted on a
/// terminal, never in a pipe under `auto`, never with `NO_COLOR` (unless `--color
/// always` asks), never with `--color never`, and never inside `--json`.
final class ColorCLITests: XCTestCase {
    var cli: CLIHarness!

    override func setUpWithError() throws {
        try super.setUpWithError()
        cli = try CLIHarness(testCase: self)
        try cli.useSandboxConfiguration()
        try cli.file("fails.lua", """
            recipe { name = "fails" }
            log.warn("careful")
            error("boom", 0)
            """)
        try cli.file("good.lua", "recipe { name = \"good\" }\nprint(\"hi\")\n")
        try cli.file("bad.lua", "recipe { name = \"bad\" }\nprint(\n")
    }

    override func tearDown() {
        cli = nil
        super.tearDown()
    }

    static let red = "\u{1B}[1;31m", yellow = "\u{1B}[33m", green = "\u{1B}[32m", bold = "\u{1B}[1m"
    static let plainRed = "\u{1B}[31m", reset = "\u{1B}[0m"

    static let paintedFailure = "\(yellow)[warn]\(reset) careful\n\(red)error:\(reset) boom\n"
    static let plainFailure = "[warn] careful\nerror: boom\n"

    func testAlwaysPaintsErrorsAndWarningsInAPipe() throws {
        let r = try cli.run(["run", "fails.lua", "--color", "always"])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderrWithoutRunStart.hasPrefix(Self.paintedFailure), r.stderr)
    }

    func testAutoInAPipeAndNeverPaintNothing() throws {
        for args in [["run", "fails.lua"], ["run", "fails.lua", "--color", "auto"], ["run", "fails.lua", "--color=never"]] {
            let r = try cli.run(args)
            XCTAssertEqual(r.status, 1)
            XCTAssertTrue(r.stderrWithoutRunStart.hasPrefix(Self.plainFailure), r.stderr)
            XCTAssertFalse(r.output.contains("\u{1B}"), "\(args): \(r.output)")
        }
    }

    func testAutoOnATerminalPaintsUnlessNoColorIsSet() throws {
        let terminal = try PseudoTerminal()
        let painted = try terminal.run(cli.onTerminal(["run", "fails.lua", "--no-progress"]))
        XCTAssertEqual(painted.status, 1)
        XCTAssertTrue(painted.screen.contains(Self.paintedFailure), painted.screen)

        let emptyIsUnset = try terminal.run(cli.onTerminal(["run", "fails.lua", "--no-progress"], environment: ["NO_COLOR": ""]))
        XCTAssertTrue(emptyIsUnset.screen.contains(Self.paintedFailure), emptyIsUnset.screen)

        for environment in [["NO_COLOR": "1"], ["NO_COLOR": "yes please"], ["TERM": "dumb"]] {
            let plain = try terminal.run(cli.onTerminal(["run", "fails.lua", "--no-progress"], environment: environment))
            XCTAssertEqual(plain.status, 1)
            XCTAssertTrue(plain.screen.contains(Self.plainFailure), plain.screen)
            XCTAssertFalse(plain.screen.contains("\u{1B}"), "\(environment): \(plain.screen)")
        }
    }

    func testTheOptionWinsOverTheEnvironmentAndTheTerminal() throws {
        let terminal = try PseudoTerminal()
        let never = try terminal.run(cli.onTerminal(["run", "fails.lua", "--no-progress", "--color", "never"]))
        XCTAssertFalse(never.screen.contains("\u{1B}"), never.screen)
        let always = try cli.run(["run", "fails.lua", "--color", "always"], input: "")
        XCTAssertTrue(always.stderrWithoutRunStart.hasPrefix(Self.paintedFailure))
        cli.extraEnvironment["NO_COLOR"] = "1"
        let alwaysDespiteNoColor = try cli.run(["run", "fails.lua", "--color", "always"])
        XCTAssertTrue(alwaysDespiteNoColor.stderrWithoutRunStart.hasPrefix(Self.paintedFailure), alwaysDespiteNoColor.stderr)
    }

    func testTheOptionMayComeBeforeTheSubcommand() throws {
        let r = try cli.run(["--color", "always", "run", "fails.lua"])
        XCTAssertTrue(r.stderrWithoutRunStart.hasPrefix(Self.paintedFailure), r.stderr)
        let shorthand = try cli.run(["--color=always", "fails.lua"])
        XCTAssertTrue(shorthand.stderrWithoutRunStart.hasPrefix(Self.paintedFailure), shorthand.stderr)
    }

    func testAWrongValueIsAUsageError() throws {
        let r = try cli.run(["run", "fails.lua", "--color", "alwayz"], expect: 2)
        XCTAssertEqual(r.stderr, "hubscript run: --color takes auto, always or never, not 'alwayz' (did you mean 'always'?)\n"
                       + "Run 'hubscript run --help' for usage.\n")
        let global = try cli.run(["--color", "sometimes", "run", "fails.lua"], expect: 2)
        XCTAssertEqual(global.stderr, "hubscript: --color takes auto, always or never, not 'sometimes'\n"
                       + "Run 'hubscript --help' for the list of subcommands.\n")
    }

    func testAUsageErrorIsPaintedAsAsked() throws {
        let r = try cli.run(["run", "fails.lua", "--bogus", "--color", "always"], expect: 2)
        XCTAssertTrue(r.stderr.hasPrefix("\(Self.red)hubscript run:\(Self.reset) unknown option '--bogus'"), r.stderr)
    }

    func testCheckPaintsOkAndFail() throws {
        let r = try cli.hubscript("check", "good.lua", "bad.lua", "--color", "always")
        XCTAssertEqual(r.status, 1)
        let lines = r.stdout.components(separatedBy: "\n")
        XCTAssertEqual(lines.first, "\(Self.green)ok\(Self.reset)   good.lua", r.stdout)
        XCTAssertEqual(lines.dropFirst().first, "\(Self.red)FAIL\(Self.reset) bad.lua", r.stdout)
        let plain = try cli.hubscript("check", "good.lua", "bad.lua")
        XCTAssertTrue(plain.stdout.hasPrefix("ok   good.lua\nFAIL bad.lua\n"), plain.stdout)
    }

    func testThePlanTableIsPaintedAndStillLinesUp() throws {
        try cli.file("suspend.lua", PlanShowCLITests.suspendRecipe)
        let r = try cli.run(["plan", "suspend.lua", "--param", "user=ada@example.com", "--color", "always"], expect: 0)
        let b = Self.bold, e = Self.reset
        let id = try PlanShowCLITests.planID(r.stderr.replacingOccurrences(of: b, with: ""))
        XCTAssertTrue(r.stderrWithoutRunStart.hasPrefix("""
            \(b)Plan \(id): suspend.lua, profile sandbox\(e)
            \(b)#\(e)  \(b)METHOD\(e)  \(b)TARGET\(e)                  \(b)CHANGE\(e)
            1  \(Self.green)POST\(e)    /users/usr_ada/suspend  suspend usr_ada {"reason":"left"}
            \(b)1 write planned, 1 read; nothing was sent.\(e)

            """), r.stderr)
    }

    func testJSONCarriesNoColourCodes() throws {
        let r = try cli.run(["run", "fails.lua", "--json", "--color", "always"])
        XCTAssertEqual(r.status, 1)
        XCTAssertFalse(r.stdout.contains("\u{1B}"), r.stdout)
        XCTAssertTrue(r.stdout.contains("\"message\":\"boom\""), r.stdout)
        try cli.file("suspend.lua", PlanShowCLITests.suspendRecipe)
        let plan = try cli.run(["plan", "suspend.lua", "--param", "user=ada@example.com", "--json", "--color", "always"], expect: 0)
        XCTAssertFalse(plan.stdout.contains("\u{1B}"), plan.stdout)
    }
}
