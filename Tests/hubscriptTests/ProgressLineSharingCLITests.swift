import Foundation
import XCTest

/// On a terminal, the progress line and a recipe's printed and logged lines never share
/// a line: a line said while the bar is drawn erases it first, and the bar is drawn
/// again after.
final class ProgressLineSharingCLITests: XCTestCase {
    var cli: CLIHarness!

    override func setUpWithError() throws {
        try super.setUpWithError()
        cli = try CLIHarness(testCase: self)
        try cli.useSandboxConfiguration()
    }

    override func tearDown() {
        cli = nil
        super.tearDown()
    }

    /// What a terminal shows after `bytes`: `\r` goes to the start of the line, `ESC[K`
    /// erases to its end, `\n` starts the next line, other escape sequences are dropped,
    /// and characters overwrite what is under the cursor.
    static func lines(_ screen: String) -> [String] {
        var lines: [[Character]] = [[]]
        var column = 0
        var characters = Array(screen)
        var k = 0
        while k < characters.count {
            let c = characters[k]
            k += 1
            switch c {
            case "\r": column = 0
            case "\n": lines.append([]); column = 0
            case "\u{1B}":
                guard k < characters.count, characters[k] == "[" else { continue }
                var end = k + 1
                while end < characters.count, !characters[end].isLetter { end += 1 }
                if end < characters.count, characters[end] == "K" {
                    lines[lines.count - 1].removeSubrange(min(column, lines[lines.count - 1].count)...)
                }
                k = end + 1
            default:
                var line = lines[lines.count - 1]
                while line.count < column { line.append(" ") }
                if column < line.count { line[column] = c } else { line.append(c) }
                lines[lines.count - 1] = line
                column += 1
            }
        }
        characters.removeAll()
        return lines.map { String($0) }
    }

    func testTheEmulatorShowsAPrintAfterABarOnTheBarsLine() {
        // What the terminal showed before lines cleared the bar: the two on one line.
        XCTAssertEqual(Self.lines("\rworking  0% 0/3\u{1B}[Kitem 1\n"), ["working  0% 0/3item 1", ""])
        XCTAssertEqual(Self.lines("\rworking  0% 0/3\u{1B}[K\r\u{1B}[Kitem 1\n\rworking\u{1B}[K"), ["item 1", "working"])
    }

    func testPrintsAndLogsNeverLandOnTheProgressLine() throws {
        try cli.file("bar.lua", """
            recipe { name = "bar" }
            local bar = progress(3, "working")
            for i = 1, 3 do
              bar:advance()
              print("item " .. i)
              log.info("logged " .. i)
            end
            bar:done()
            print("after")
            """)
        let terminal = try PseudoTerminal()
        let r = try terminal.run(cli.onTerminal(["run", "bar.lua", "--color", "never"]))
        XCTAssertEqual(r.status, 0, r.screen)
        let shown = Self.lines(r.screen).filter { !$0.isEmpty && !$0.hasPrefix("run run_") && !$0.hasPrefix("done: run ") }
        XCTAssertEqual(shown, ["item 1", "[info] logged 1", "item 2", "[info] logged 2", "item 3", "[info] logged 3", "after"],
                       r.screen.debugDescription)
        // The bar was drawn, erased before each line and drawn again after it.
        XCTAssertTrue(r.screen.contains("\r\u{1B}[Kitem 1\n\rworking "), r.screen.debugDescription)
        XCTAssertTrue(r.screen.contains("\r\u{1B}[K[info] logged 3\n\rworking "), r.screen.debugDescription)
    }

    func testPrintsToAFileDoNotRedrawTheBarOnTheTerminal() throws {
        try cli.file("bar.lua", """
            recipe { name = "bar" }
            local bar = progress(50, "working")
            for i = 1, 50 do
              bar:advance()
              print("item " .. i)
            end
            bar:done()
            """)
        let terminal = try PseudoTerminal()
        let r = try terminal.run(cli.onTerminal(["run", "bar.lua", "--color", "never"]), stdout: false)
        XCTAssertEqual(r.status, 0, r.screen)
        XCTAssertEqual(r.stdout, (1...50).map { "item \($0)\n" }.joined())
        // Only the bar's own erase when it is done: none around the 50 printed lines.
        XCTAssertEqual(r.screen.components(separatedBy: "\r\u{1B}[K").count - 1, 1, r.screen.debugDescription)
    }

    func testWithoutATerminalNothingIsDrawnAroundLines() throws {
        try cli.file("bar.lua", """
            recipe { name = "bar" }
            local bar = progress(2, "working")
            bar:advance()
            print("item")
            bar:done()
            """)
        let r = try cli.run(["run", "bar.lua"], expect: 0)
        XCTAssertEqual(r.stdout, "item\n")
        XCTAssertFalse(r.stderr.contains("\u{1B}") || r.stderr.contains("\r"), r.stderr.debugDescription)
    }
}
