import Foundation
import ScriptHost
import XCTest
import RecipeModules

final class ProgressTests: XCTestCase {
    func testTheReporterSeesStartAdvancesAndDoneAndNothingGoesToStdout() throws {
        let h = try RecipeHarness()
        h.runOK("""
        local p = progress(10, "import")
        p:advance()
        p:advance(4)
        p:done()
        p:done()
        local q = progress.start(nil)
        q:advance(2)
        """)
        XCTAssertEqual(h.progress.events, [
            .started(ProgressState(id: 1, label: "import", total: 10)),
            .advanced(ProgressState(id: 1, label: "import", total: 10, count: 1)),
            .advanced(ProgressState(id: 1, label: "import", total: 10, count: 5)),
            .finished(ProgressState(id: 1, label: "import", total: 10, count: 5, isDone: true)),
            .started(ProgressState(id: 2, label: "", total: nil)),
            .advanced(ProgressState(id: 2, label: "", total: nil, count: 2)),
        ])
        XCTAssertEqual(h.output.lines, [])
        XCTAssertTrue(h.output.events.isEmpty)
    }

    func testArgumentErrors() throws {
        let h = try RecipeHarness()
        XCTAssertEqual(h.runFailing("progress(-1)"),
                       "recipes/test.lua:1: bad argument #1 to 'progress' (total must be a non-negative integer, got -1)")
        XCTAssertEqual(h.runFailing("progress('x')"),
                       "recipes/test.lua:1: bad argument #1 to 'progress' (number expected, got string)")
        XCTAssertEqual(h.runFailing("local p = progress(3)\np:advance(1.5)"),
                       "recipes/test.lua:2: bad argument #1 to 'advance' (n must be a non-negative integer, got 1.5)")
        XCTAssertEqual(h.runFailing("local p = progress(3)\np.advance(1)"),
                       "recipes/test.lua:2: progress: call advance with a colon: p:advance(n)")
        XCTAssertEqual(h.runFailing("local p = progress(3, 'sync')\np:done()\np:advance()"),
                       "recipes/test.lua:3: progress: 'sync' is already done; advance it before calling done()")
    }

    func testTerminalReporterThrottlesAndDrawsNothingWhenNotATerminal() {
        final class Sink: @unchecked Sendable {
            var text = ""
            var now = 0.0
        }
        let sink = Sink()
        let reporter = TerminalProgressReporter(isEnabled: true, clock: { sink.now }, sink: { sink.text += $0 })
        var bar = ProgressState(id: 1, label: "sync", total: 100)
        reporter.started(bar)
        sink.now = 0.05
        bar.count = 10
        reporter.advanced(bar)   // within 0.1 s of the last draw: skipped
        sink.now = 2
        bar.count = 50
        reporter.advanced(bar)
        sink.now = 4
        bar.count = 100
        bar.isDone = true
        reporter.finished(bar)
        // Done: the line is erased, not left behind.
        XCTAssertEqual(sink.text, "\rsync    0% 0/100\u{1B}[K"
            + "\rsync   50% 50/100  25.0/s  ETA 0:02  [0:02]\u{1B}[K"
            + "\r\u{1B}[K")

        XCTAssertEqual(TerminalProgressReporter.line(for: ProgressState(id: 1, label: "", total: nil, count: 420), elapsed: 10),
                       "420  42.0/s  [0:10]")
        XCTAssertEqual(TerminalProgressReporter.line(for: ProgressState(id: 1, label: "x", total: 10_000, count: 1), elapsed: 1),
                       "x    0% 1/10000  1.0/s  ETA 2:46:39  [0:01]")
        XCTAssertEqual(TerminalProgressReporter.line(for: ProgressState(id: 1, label: "a\u{1B}[2Jb\n", total: nil), elapsed: 0),
                       "a?[2Jb?  0")

        let silent = Sink()
        let off = TerminalProgressReporter(isEnabled: false, clock: { 0 }, sink: { silent.text += $0 })
        off.started(bar)
        off.advanced(bar)
        off.finished(bar)
        off.endLine()
        XCTAssertEqual(silent.text, "")
    }
}
