import Foundation
import XCTest
@testable import RecipeModules

/// A console line written while the progress line is drawn (`clearing`) erases the
/// line first and draws it again after, so the two never share a terminal line.
final class ProgressLineSharingTests: XCTestCase {
    final class Sink: @unchecked Sendable {
        var text = ""
        var now = 0.0
    }

    func testALineWrittenUnderTheBarErasesItAndDrawsItAgain() {
        let sink = Sink()
        let reporter = TerminalProgressReporter(isEnabled: true, clock: { sink.now }, sink: { sink.text += $0 })
        reporter.started(ProgressState(id: 1, label: "sync", total: 10))
        reporter.clearing { sink.text += "item 1\n" }
        reporter.clearing { sink.text += "item 2\n" }
        XCTAssertEqual(sink.text, "\rsync    0% 0/10\u{1B}[K"
                       + "\r\u{1B}[Kitem 1\n\rsync    0% 0/10\u{1B}[K"
                       + "\r\u{1B}[Kitem 2\n\rsync    0% 0/10\u{1B}[K")
        // The redrawn bar is the one on the line: it is erased when it finishes.
        sink.text = ""
        reporter.finished(ProgressState(id: 1, label: "sync", total: 10, count: 10, isDone: true))
        XCTAssertEqual(sink.text, "\r\u{1B}[K")
    }

    func testALineWithNoBarShownIsWrittenAlone() {
        let sink = Sink()
        let reporter = TerminalProgressReporter(isEnabled: true, clock: { sink.now }, sink: { sink.text += $0 })
        reporter.clearing { sink.text += "before\n" }
        reporter.started(ProgressState(id: 1, label: "sync", total: nil))
        reporter.finished(ProgressState(id: 1, label: "sync", total: nil, count: 1, isDone: true))
        sink.text = ""
        reporter.clearing { sink.text += "after\n" }
        XCTAssertEqual(sink.text, "after\n")
        let off = Sink()
        let disabled = TerminalProgressReporter(isEnabled: false, sink: { off.text += $0 })
        disabled.started(ProgressState(id: 1, label: "sync", total: nil))
        disabled.clearing { off.text += "line\n" }
        XCTAssertEqual(off.text, "line\n")
    }

    func testAWaitOnTheLineIsDrawnAgainAfterALine() {
        let sink = Sink()
        let reporter = TerminalProgressReporter(isEnabled: true, clock: { sink.now }, sink: { sink.text += $0 })
        reporter.countdown(seconds: 30) { "waiting \($0) s" }
        reporter.clearing { sink.text += "said\n" }
        reporter.endLine()
        XCTAssertEqual(sink.text, "\rwaiting 30 s\u{1B}[K\r\u{1B}[Ksaid\n\rwaiting 30 s\u{1B}[K\r\u{1B}[K")
    }
}
