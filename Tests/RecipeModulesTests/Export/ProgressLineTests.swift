import Foundation
import XCTest
@testable import RecipeModules

/// One progress line for the recipe, erased when done; the recipe's
/// own bar wins over list reads; list reads are labelled by resource.
final class ProgressLineTests: XCTestCase {
    final class Sink: @unchecked Sendable {
        var text = ""
        var now = 0.0
    }

    func testListReadsYieldToTheRecipesBarAndEveryLineIsErased() {
        let sink = Sink()
        let reporter = TerminalProgressReporter(isEnabled: true, clock: { sink.now }, sink: { sink.text += $0 })
        var list = ProgressState(id: TerminalProgressReporter.listBarIDs + 1, label: "reading users", total: nil)
        reporter.started(list)
        XCTAssertEqual(sink.text, "\rreading users  0\u{1B}[K")
        sink.text = ""
        var own = ProgressState(id: 1, label: "sync", total: 10)
        reporter.started(own)
        sink.now = 1
        list.count = 100
        reporter.advanced(list)          // the recipe's bar holds the line
        own.count = 5
        reporter.advanced(own)
        XCTAssertEqual(sink.text, "\rsync    0% 0/10\u{1B}[K\rsync   50% 5/10  5.0/s  ETA 0:01  [0:01]\u{1B}[K")
        sink.text = ""
        own.isDone = true
        reporter.finished(own)           // erased
        sink.now = 1.01
        list.count = 200
        reporter.advanced(list)          // the list shows again at once
        list.isDone = true
        reporter.finished(list)
        reporter.endLine()               // nothing left to erase
        XCTAssertEqual(sink.text, "\r\u{1B}[K\rreading users  200  198.0/s  [0:01]\u{1B}[K\r\u{1B}[K")
    }

    func testAListReadEndingUnderTheRecipesBarLeavesTheLineAlone() {
        let sink = Sink()
        let reporter = TerminalProgressReporter(isEnabled: true, clock: { sink.now }, sink: { sink.text += $0 })
        reporter.started(ProgressState(id: 1, label: "members", total: nil))
        let list = ProgressState(id: TerminalProgressReporter.listBarIDs + 7, label: "reading entitlements", total: nil)
        reporter.started(list)
        reporter.finished(list)
        XCTAssertEqual(sink.text, "\rmembers  0\u{1B}[K")
    }

    /// A wait takes the line as a countdown of whole seconds, redrawn each second, and
    /// is erased at its end; the bar waits for it, then shows again (real time: ~2.5 s).
    func testACountdownTakesTheLineUntilTheWaitIsOver() {
        let frames = LockedFrames()
        let reporter = TerminalProgressReporter(isEnabled: true, sink: { frames.append($0) })
        reporter.started(ProgressState(id: 1, label: "sync", total: nil))
        reporter.countdown(seconds: 2.5) { "rate limited by the Hub, waiting \($0) s" }
        reporter.advanced(ProgressState(id: 1, label: "sync", total: nil, count: 1))   // held back
        reporter.countdown(seconds: 1) { "covered by the longer wait: \($0) s" }       // ends sooner: ignored
        Thread.sleep(forTimeInterval: 2.8)
        reporter.advanced(ProgressState(id: 1, label: "sync", total: nil, count: 2))
        reporter.endLine()
        // (The bar's rate and elapsed time, from the real clock, left out.)
        XCTAssertEqual(frames.all.map {
            $0.replacingOccurrences(of: "\u{1B}", with: "ESC")
                .replacingOccurrences(of: #"  [0-9.]+/s(  \[[0-9:]+\])?"#, with: "", options: .regularExpression)
        }, [
            "\rsync  0ESC[K",
            "\rrate limited by the Hub, waiting 3 sESC[K",
            "\rrate limited by the Hub, waiting 2 sESC[K",
            "\rrate limited by the Hub, waiting 1 sESC[K",
            "\rESC[K",
            "\rsync  2ESC[K",
            "\rESC[K",
        ])
        let off = LockedFrames()
        TerminalProgressReporter(isEnabled: false, sink: { off.append($0) }).countdown(seconds: 1) { "\($0)" }
        XCTAssertEqual(off.all, [], "no terminal, no countdown (the CLI prints a line instead)")
    }

    final class LockedFrames: @unchecked Sendable {
        private let lock = NSLock()
        private var frames: [String] = []
        func append(_ s: String) { lock.withLock { frames.append(s) } }
        var all: [String] { lock.withLock { frames } }
    }

    func testInterjectErasesTheBarAndWritesALine() {
        let sink = Sink()
        let reporter = TerminalProgressReporter(isEnabled: true, clock: { sink.now }, sink: { sink.text += $0 })
        reporter.started(ProgressState(id: 1, label: "sync", total: nil))
        reporter.interject("rate limited by the Hub, waiting 3 s")
        reporter.advanced(ProgressState(id: 1, label: "sync", total: nil, count: 1))
        XCTAssertEqual(sink.text, "\rsync  0\u{1B}[K\r\u{1B}[Krate limited by the Hub, waiting 3 s\n\rsync  1\u{1B}[K")
        let off = Sink()
        let silent = TerminalProgressReporter(isEnabled: false, clock: { 0 }, sink: { off.text += $0 })
        silent.interject("rate limited by the Hub, waiting 3 s")
        XCTAssertEqual(off.text, "rate limited by the Hub, waiting 3 s\n")
    }

    func testListLabelsNameTheResource() {
        XCTAssertEqual(HubRunContext.resource(of: "hub.users.list"), "users")
        XCTAssertEqual(HubRunContext.resource(of: "hub.users.roles"), "user roles")
        XCTAssertEqual(HubRunContext.resource(of: "hub.organizations.members"), "organization members")
        XCTAssertEqual(HubRunContext.resource(of: "hub.api_keys.list"), "API keys")
        XCTAssertEqual(HubRunContext.resource(of: "hub.audit.query"), "audit events")
        XCTAssertEqual(HubRunContext.resource(of: "hub.entitlements.for_user"), "entitlements")
    }
}
