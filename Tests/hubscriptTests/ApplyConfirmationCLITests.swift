import Foundation
import XCTest

/// `apply` with a person at a terminal shows the plan and asks before sending; `--yes`
/// answers for them; a pipe, a file or `--json` never gets the question.
final class ApplyConfirmationCLITests: XCTestCase {
    var cli: CLIHarness!
    var terminal: PseudoTerminal!

    override func setUpWithError() throws {
        try super.setUpWithError()
        cli = try CLIHarness(testCase: self)
        try cli.useSandboxConfiguration()
        terminal = try PseudoTerminal()
        try cli.file("suspend.lua", PlanShowCLITests.suspendRecipe)
        try cli.run(["plan", "suspend.lua", "--param", "user=ada@example.com", "--out", "p.json"], expect: 0)
    }

    override func tearDown() {
        cli = nil
        terminal = nil
        super.tearDown()
    }

    static let question = "Apply 1 write to the built-in sandbox (profile sandbox)? [y/N] "

    var adaStatus: String? {
        get throws { try cli.sandbox().get("/users/usr_ada").string("status") }
    }

    /// The screen up to and with the question: the plan's table, then the question.
    func assertAsked(_ screen: String, file: StaticString = #filePath, line: UInt = #line) {
        guard let at = screen.range(of: Self.question) else {
            return XCTFail("no question on the screen:\n\(screen)", file: file, line: line)
        }
        let before = String(screen[..<at.lowerBound])
        XCTAssertTrue(before.hasSuffix(PlanShowCLITests.tableRows), before, file: file, line: line)
        XCTAssertTrue(before.hasPrefix("Plan run_"), before, file: file, line: line)
    }

    func testNoOnATerminalSendsNothing() throws {
        let before = try adaStatus
        let r = try terminal.run(cli.onTerminal(["apply", "p.json", "--color", "never"]),
                                 answering: Self.question, with: "n\n")
        XCTAssertEqual(r.status, 1, r.screen)
        assertAsked(r.screen)
        XCTAssertTrue(r.screen.hasSuffix(Self.question + "apply cancelled: nothing was sent\n"), r.screen)
        XCTAssertEqual(try adaStatus, before)
        XCTAssertNotEqual(before, "suspended")
    }

    func testAnEmptyAnswerOrTheEndOfInputSendsNothing() throws {
        let empty = try terminal.run(cli.onTerminal(["apply", "p.json", "--color", "never"]),
                                     answering: Self.question, with: "\n")
        XCTAssertEqual(empty.status, 1, empty.screen)
        let ended = try terminal.run(cli.onTerminal(["apply", "p.json", "--color", "never"]),
                                     answering: Self.question, with: "\u{04}")
        XCTAssertEqual(ended.status, 1, ended.screen)
        XCTAssertTrue(ended.screen.hasSuffix(Self.question + "\napply cancelled: nothing was sent\n"), ended.screen)
        XCTAssertNotEqual(try adaStatus, "suspended")
    }

    func testYesOnATerminalApplies() throws {
        let r = try terminal.run(cli.onTerminal(["apply", "p.json", "--color", "never"]),
                                 answering: Self.question, with: "Yes\n")
        XCTAssertEqual(r.status, 0, r.screen)
        assertAsked(r.screen)
        XCTAssertTrue(r.screen.contains("done: run "), r.screen)
        XCTAssertEqual(try adaStatus, "suspended")
    }

    func testTheYesOptionSkipsTheQuestion() throws {
        let r = try terminal.run(cli.onTerminal(["apply", "p.json", "--yes", "--color", "never"]))
        XCTAssertEqual(r.status, 0, r.screen)
        XCTAssertFalse(r.screen.contains("[y/N]"), r.screen)
        XCTAssertEqual(try adaStatus, "suspended")
    }

    func testAPipeNeverAsks() throws {
        let r = try cli.run(["apply", "p.json"], input: "n\n")
        XCTAssertEqual(r.status, 0, r.output)
        XCTAssertFalse(r.output.contains("[y/N]"), r.output)
        XCTAssertEqual(try adaStatus, "suspended")
    }

    func testOnlyOneEndOnATerminalNeverAsks() throws {
        // stdout to a file: nobody sees a question.
        let redirected = try terminal.run(cli.onTerminal(["apply", "p.json"]), stdout: false)
        XCTAssertEqual(redirected.status, 0, redirected.screen + redirected.stdout)
        XCTAssertFalse((redirected.screen + redirected.stdout).contains("[y/N]"))
        XCTAssertEqual(try adaStatus, "suspended")
    }

    func testStdinNotATerminalNeverAsks() throws {
        let r = try terminal.run(cli.onTerminal(["apply", "p.json"]), stdin: false)
        XCTAssertEqual(r.status, 0, r.screen)
        XCTAssertFalse(r.screen.contains("[y/N]"), r.screen)
        XCTAssertEqual(try adaStatus, "suspended")
    }

    func testJSONOnATerminalNeverAsks() throws {
        let r = try terminal.run(cli.onTerminal(["apply", "p.json", "--json"]))
        XCTAssertEqual(r.status, 0, r.screen)
        XCTAssertFalse(r.screen.contains("[y/N]"), r.screen)
        XCTAssertEqual(try adaStatus, "suspended")
    }

    func testARefusedPlanIsRefusedBeforeAnyQuestion() throws {
        try cli.file("suspend.lua", PlanShowCLITests.suspendRecipe + "\n-- changed\n")
        let r = try terminal.run(cli.onTerminal(["apply", "p.json", "--color", "never"]))
        XCTAssertNotEqual(r.status, 0, r.screen)
        XCTAssertFalse(r.screen.contains("[y/N]"), r.screen)
        XCTAssertNotEqual(try adaStatus, "suspended")
    }

    func testAPlanWithoutWritesIsNotAskedAbout() throws {
        try cli.file("reads.lua", """
            recipe { name = "reads", needs = { "users.list" } }
            print(hub.users.get("ada@example.com").id)
            """)
        try cli.run(["plan", "reads.lua", "--out", "none.json"], expect: 0)
        let r = try terminal.run(cli.onTerminal(["apply", "none.json", "--color", "never"]))
        XCTAssertEqual(r.status, 0, r.screen)
        XCTAssertFalse(r.screen.contains("[y/N]"), r.screen)
        XCTAssertTrue(r.screen.contains("usr_ada\n"), r.screen)
    }
}
