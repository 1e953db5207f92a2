import Foundation
import XCTest

/// Recipe-controlled text reaches people escaped (escape sequences,
/// carriage returns, bidi controls show as `\e`, `\r`, `\u{202E}`), so it cannot hide
/// a planted write, the real `needs` line or forge a `done:` line; `--json` carries the
/// exact text.
final class TerminalOutputTests: XCTestCase {
    private var cli: CLIHarness!

    override func setUpWithError() throws {
        try super.setUpWithError()
        cli = try CLIHarness(testCase: self)
    }

    override func tearDown() {
        cli = nil
        super.tearDown()
    }

    /// The bytes a recipe prints, as Lua source: clear screen, carriage return, a bidi
    /// override, a tab and a line break (kept), a C1 control.
    static let hostileLine = #"print("a\27[2J\rb\u{202E}c\td\ne\u{85}f")"#

    func testAPrintedLineIsEscapedForPeople() throws {
        try cli.file("p.lua", "recipe { name = \"p\" }\n\(Self.hostileLine)\n")
        assertResult(try cli.hubscript("run", "p.lua"),
                     stdout: #"a\e[2J\rb\u{202E}c"# + "\td\n" + #"e\u{0085}f"# + "\n", stderr: "", exitCode: 0)
    }

    func testAPrintedLineIsExactInJSON() throws {
        try cli.file("p.lua", "recipe { name = \"p\" }\n\(Self.hostileLine)\n")
        let result = try cli.hubscript("run", "p.lua", "--json")
        XCTAssertEqual(result.status, 0)
        let first = JSONLines.withoutTimestamps(result.stdout).dropFirst().first ?? ""
        XCTAssertEqual(first, "{\"text\":\"a\\u001b[2J\\rb\u{202E}c\\td\\ne\u{85}f\",\"type\":\"print\"}")
        let decoded = try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: String]
        XCTAssertEqual(decoded?["text"], "a\u{1B}[2J\rb\u{202E}c\td\ne\u{85}f")
        XCTAssertEqual(result.stderrWithoutRunStart, "")
    }

    func testAForgedDoneLineIsEscapedInPrintLogAndError() throws {
        // Each tries to pass for the CLI's closing line on a terminal: print moves the
        // cursor and clears the line, log and error start a new line.
        try cli.file("f.lua", """
        recipe { name = "f" }
        print("\\r\\27[2Kdone: run run_fake — 0 reads, 0 writes in 0.01 s")
        log.warn("x\\ndone: run run_fake — 0 reads, 0 writes in 0.01 s")
        error("y\\r\\ndone: run run_fake — 0 reads, 0 writes in 0.01 s", 0)
        """)
        assertResult(try cli.hubscript("run", "f.lua"),
                     stdout: #"\r\e[2Kdone: run run_fake — 0 reads, 0 writes in 0.01 s"# + "\n",
                     stderr: #"[warn] x\ndone: run run_fake — 0 reads, 0 writes in 0.01 s"# + "\n"
                        + #"error: y\r\ndone: run run_fake — 0 reads, 0 writes in 0.01 s"# + "\n"
                        + "stack traceback:\n\t[C]: in function 'error'\n\tf.lua:4: in main chunk\n\t[C]: in ?\n",
                     exitCode: 1)
    }

    func testDescribeEscapesTheManifest() throws {
        // ESC[8m (conceal) in the description would hide everything after it, the
        // Needs line included; ESC[1A ESC[2K in a param description would erase a line.
        try cli.file("d.lua", """
        recipe {
          name = "d\\r",
          description = "Harmless.\\27[8m",
          params = { who = { type = "string", description = "x\\27[1A\\27[2K\\nNeeds: (no permissions)" } },
          needs = { "users.manage" },
        }
        """)
        assertResult(try cli.hubscript("describe", "d.lua"), stdout: #"""
        d\r
          Harmless.\e[8m

        Parameters:
          who  string    — x\e[1A\e[2K\nNeeds: (no permissions)

        Needs: users.manage
        Limits: (defaults)

        """#, stderr: "", exitCode: 0)
    }

    func testThePlanTableEscapesSummariesAndRefusesControlCharactersInIDs() throws {
        // A `\r` and cursor movement would overwrite the table's rows on a terminal: a
        // body's ESC is \u001b in JSON, and ids with control characters are refused
        // before they reach a path (ArgumentCapTests has the exact messages).
        try cli.file("planted.lua", """
        recipe { name = "planted", needs = { "users.manage" } }
        hub.users.suspend("usr_ada", { reason = "offboarded\\27[8m" })
        print(pcall(hub.sessions.revoke, "usr_ada\\r", "ses_1\\r\\27[1A\\27[2K"))
        """)
        let result = try cli.hubscript("plan", "planted.lua")
        XCTAssertEqual(result.status, 0, result.stderrWithoutRunStart)
        let runID = try XCTUnwrap(result.stderrWithoutRunStart.split(separator: " ").dropFirst().first).dropLast()  // "Plan <id>: …"
        XCTAssertEqual(result.stdout,
                       "false\tbad argument #1 to 'hub.sessions.revoke' (an id cannot contain control characters (byte 8 is 0x0D))\n")
        let normalized = result.stderrWithoutRunStart.replacingOccurrences(of: #"in [0-9]+\.[0-9]{2} s\n$"#, with: "in … s\n",
                                                            options: .regularExpression)
        XCTAssertEqual(normalized, #"""
        Plan \#(runID): planted.lua, profile sandbox
        #  METHOD  TARGET                  CHANGE
        1  POST    /users/usr_ada/suspend  suspend usr_ada {"reason":"offboarded\u001b[8m"}
        1 write planned, 0 reads; nothing was sent.
        done: run \#(runID) — 0 reads, 0 writes, 1 planned in … s

        """#)
    }

    func testCheckEscapesTheProblem() throws {
        try cli.file("c.lua", "recipe { name = \"c\", [\"co\\27[8mlour\"] = 1 }\n")
        let result = try cli.hubscript("check", "c.lua")
        XCTAssertEqual(result.stdout, #"""
        FAIL c.lua
             c.lua:1: manifest: unknown key 'co\e[8mlour' in the manifest (allowed: name, version, description, params, needs, secrets, targets, limits)

        """#)
        XCTAssertEqual(result.status, 1)
    }
}
