import Foundation
import XCTest

extension RunOutputCLITests {
    /// Recipe text is escaped for the terminal: it cannot colour, hide or reorder what
    /// `runs show --output` prints, nor pass a line of its own for a heading; `--json`
    /// keeps it exact.
    func testHostileTextIsShownEscapedAndKeptExact() throws {
        try cli.file("hostile.lua", #"""
            recipe { name = "hostile", version = "1.0.0", description = "Test fixture: hostile text." }
            print("\27[31mred\27[0m \u{202E}evil\u{202C} <script>alert(1)</script>")
            print("x\nattempt 9 (2026-01-01 UTC)")
            log.info("bell\7 and\r return")
            """#)
        let id = try runID(try cli.run(["hostile.lua"], expect: 0))
        let shown = stable(try cli.run(["runs", "show", id, "--output"], expect: 0).stdout)
        XCTAssertEqual(shown, #"""
            attempt 1 (YYYY-MM-DD UTC)
              HH:MM:SS.mmm  \e[31mred\e[0m \u{202E}evil\u{202C} <script>alert(1)</script>
              HH:MM:SS.mmm  x
                            attempt 9 (YYYY-MM-DD UTC)
              HH:MM:SS.mmm  [info] bell\x07 and\r return
              HH:MM:SS.mmm  succeeded (exit 0): run \#(id) — 0 reads, 0 writes in … s

            """#)
        let (lines, _) = try keptLines(id)
        XCTAssertEqual(lines.first?["text"] as? String, "\u{1B}[31mred\u{1B}[0m \u{202E}evil\u{202C} <script>alert(1)</script>")
    }
}

extension RunOutputCLITests {
    /// A run of more writes than a page shows its first 100 and says how to see the rest.
    func testALongRunShowsItsFirstHundredWrites() throws {
        try cli.file("many.lua", """
            recipe {
              name = "many", version = "1.0.0", description = "Test fixture: 105 writes.",
              needs = { "users.list", "notifications.send" },
            }
            for i = 1, 105 do
              hub.notifications.send("app_hub", { user_id = "usr_ada", title = "n" .. i, body = "b", category = "test" })
            end
            """)
        let id = try runID(try cli.run(["many.lua"], expect: 0))
        let shown = try cli.run(["runs", "show", id], expect: 0).stdout
        XCTAssertEqual(shown.components(separatedBy: " done ").count - 1, 100, shown)
        XCTAssertTrue(shown.contains("\n  100 done ") && !shown.contains("\n  101 done "), shown)
        XCTAssertTrue(shown.hasSuffix("writes 1–100 of 105 shown; see more with hubscript runs show \(id) --offset 100, --tail N, --limit N\n"),
                      shown)
        let json = try cli.json(["runs", "show", id, "--json"])
        XCTAssertEqual((json["writes_journalled"] as? [Any])?.count, 100)
        XCTAssertEqual(json["writes_total"] as? Int, 105)
        let rest = try cli.run(["runs", "show", id, "--offset", "100"], expect: 0).stdout
        XCTAssertEqual(rest.components(separatedBy: " done ").count - 1, 5, rest)
        XCTAssertTrue(rest.contains("\n  101 done ") && rest.contains("\n  105 done "), rest)
        XCTAssertTrue(rest.hasSuffix("writes 101–105 of 105 shown; see more with hubscript runs show \(id) --offset K, --tail N, --limit N\n"),
                      rest)
    }
}
