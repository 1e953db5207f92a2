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
