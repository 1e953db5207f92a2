import Foundation
import XCTest
import ScriptHost
import SystemText
import JournalTestSupport
@testable import RunJournal
@testable import Runs

/// What a run keeps of what it said (`JournalledOutput`): everything the console got,
/// masked, in batches, within the run's bound, then its closing lines.
final class JournalledOutputTests: XCTestCase {
    var journal: Journal!
    let console = MemoryOutput()

    override func setUpWithError() throws {
        journal = try Fixture.journal()
        try journal.startRun(Fixture.runStart("run_said"), masking: .shared)
    }

    func recorder(totals: RunOutputTotals = RunOutputTotals(), attempt: Int = 1,
                  inner: (any ScriptOutput)? = nil) -> JournalledOutput {
        JournalledOutput(wrapping: inner ?? console, journal: journal, runID: "run_said", attempt: attempt, totals: totals, masking: .shared)
    }

    func kept() throws -> [RunOutputLine] { try journal.output(runID: "run_said") }

    func testPrintsAndLogsAreKeptInOrderAndStillReachTheConsole() throws {
        let out = recorder()
        out.printLine("hello")
        out.log(.info, "granted", fields: ["user": .string("ada lovelace"), "n": .integer(3), "ok": .bool(true)])
        out.log(.debug, "not at this level", fields: [:])
        out.event("write", ["path": .string("/x")])
        "bytes\u{0}too".utf8CString.dropLast().withUnsafeBytes { out.printLine(bytes: $0) }
        out.log(.error, "bad", fields: [:])
        out.close([(.error, "error: r.lua:3: boom\nstack traceback:"), (.summary, "failed (exit 1)")])
        let lines = try kept()
        XCTAssertEqual(lines.map(\.kindName), ["print", "log.info", "print", "log.error", "error", "summary"])
        XCTAssertEqual(lines.map(\.text), ["hello", #"granted n=3 ok=true user="ada lovelace""#, "bytes\u{FFFD}too", "bad",
                                           "error: r.lua:3: boom\nstack traceback:", "failed (exit 1)"])
        XCTAssertEqual(lines.map(\.sequence), Array(1...6))
        XCTAssertEqual(Set(lines.map(\.attempt)), [1])
        XCTAssertEqual(console.lines, ["hello", "bytes\u{0}too"])
        XCTAssertEqual(console.logs.map(\.message), ["granted", "not at this level", "bad"])
        XCTAssertEqual(console.events.map(\.type), ["write"])
    }

    func testDebugLinesAreKeptWhenTheConsoleShowsThem() throws {
        let out = recorder(inner: ConsoleOutput(json: false, minimumLevel: .debug, stdoutFD: -1, stderrFD: -1))
        out.log(.debug, "verbose", fields: [:])
        out.close([])
        XCTAssertEqual(try kept().map(\.kindName), ["log.debug"])
    }

    func testLinesAreWrittenInBatchesNotOneTransactionPerLine() throws {
        let out = recorder()
        for n in 1...10 { out.printLine("line \(n)") }
        XCTAssertEqual(try kept().count, 0, "ten lines said at once wait for their batch")
        for n in 11...JournalledOutput.batchLines { out.printLine("line \(n)") }
        XCTAssertEqual(try kept().count, JournalledOutput.batchLines, "a full batch is committed")
        out.printLine("one more")
        XCTAssertEqual(try kept().count, JournalledOutput.batchLines)
        out.close([])
        XCTAssertEqual(try kept().count, JournalledOutput.batchLines + 1, "close commits the rest")
    }

    func testARunKeepsAtMostItsBoundOfLinesThenSaysHowMuchItLeftOut() throws {
        let out = recorder()
        let extra = 50
        for n in 1...(RunOutputBound.lines + extra) { out.printLine("n\(n)") }
        out.close([(.summary, "succeeded (exit 0)")])
        let lines = try kept()
        XCTAssertEqual(lines.count, RunOutputBound.lines + 2)
        XCTAssertEqual(lines[RunOutputBound.lines - 1].text, "n\(RunOutputBound.lines)")
        let leftOut = (RunOutputBound.lines + 1...RunOutputBound.lines + extra).map { "n\($0)".utf8.count }.reduce(0, +)
        XCTAssertEqual(lines[RunOutputBound.lines].kind, .truncated)
        XCTAssertEqual(lines[RunOutputBound.lines].text, """
            output truncated: \(extra) more lines (\(leftOut) bytes) not kept; the journal keeps \
            \(RunOutputBound.lines) lines or \(RunOutputBound.bytes) bytes of a run's output
            """)
        XCTAssertEqual(lines.last?.kind, .summary, "the closing lines are kept past the bound")
        XCTAssertEqual(console.lines.count, RunOutputBound.lines + extra, "the console got every line")
    }

    /// A line crossing the byte bound keeps its beginning, cut before a character.
    func testALineCrossingTheByteBoundIsCutOnACharacterBoundary() throws {
        let out = recorder()
        let first = String(repeating: "a", count: RunOutputBound.bytes - 5)
        out.printLine(first)
        out.printLine("ééé")   // 6 bytes, 5 of room: "éé" (4 bytes) is kept
        out.printLine("after")
        out.close([])
        let lines = try kept()
        XCTAssertEqual(lines.map(\.text).dropFirst().first, "éé")
        XCTAssertEqual(lines.last?.text.hasPrefix("output truncated: 1 more lines (7 bytes) not kept"), true,
                       lines.last?.text ?? "")
        XCTAssertLessThanOrEqual(lines.filter { $0.kind?.isRecipeOutput == true }.map { $0.text.utf8.count }.reduce(0, +),
                                 RunOutputBound.bytes)
    }

    /// Ill-formed UTF-8 reads as U+FFFD (three bytes for one): the bound still holds.
    func testIllFormedBytesNeverStretchTheBound() throws {
        let out = recorder(totals: RunOutputTotals(recipeLines: 1, recipeBytes: RunOutputBound.bytes - 4, lines: 1, lastSequence: 1))
        [UInt8](repeating: 0xFF, count: 10).withUnsafeBytes { out.printLine(bytes: $0) }
        out.close([])
        let lines = try kept()
        XCTAssertEqual(lines.first?.text, "\u{FFFD}", "one U+FFFD (3 bytes) fits in 4; a second would not")
        XCTAssertEqual(lines.first?.sequence, 2)
    }

    func testAResumeGoesOnFromWhatEarlierAttemptsKept() throws {
        let out = recorder(totals: RunOutputTotals(recipeLines: RunOutputBound.lines - 2, recipeBytes: 10, lines: 40, lastSequence: 41),
                           attempt: 3)
        for n in 1...5 { out.printLine("again \(n)") }
        out.close([(.summary, "done")])
        let lines = try kept()
        XCTAssertEqual(lines.map(\.sequence), [42, 43, 44, 45])
        XCTAssertEqual(lines.map(\.text).prefix(2), ["again 1", "again 2"])
        XCTAssertEqual(lines[2].kind, .truncated)
        XCTAssertTrue(lines[2].text.hasPrefix("output truncated: 3 more lines"), lines[2].text)
        XCTAssertEqual(Set(lines.map(\.attempt)), [3])
    }

    /// Masked before it is cut: a secret across the bound never leaves a piece of itself.
    func testSecretsAreMaskedBeforeTheyAreKeptOrCut() throws {
        let secret = "tok-\(UUID().uuidString)"
        Array(secret.utf8).withUnsafeBytes { SecretRedactor.shared.register($0, name: "kept-output-test") }
        let out = recorder(totals: RunOutputTotals(recipeLines: 1, recipeBytes: RunOutputBound.bytes - 12, lines: 1, lastSequence: 1))
        out.printLine("a " + secret)
        out.close([(.error, "error: refused " + secret)])
        let lines = try kept()
        XCTAssertEqual(lines.first?.text, "a <secret ke", "the mask is cut, never the secret")
        XCTAssertEqual(lines.last?.text, "error: refused <secret kept-output-test>")
        XCTAssertFalse(lines.contains { $0.text.contains(secret.prefix(8)) })
    }

    func testAClosingLineIsCutToItsOwnBound() throws {
        let out = recorder()
        out.close([(.error, "error: " + String(repeating: "t", count: 100_000))])
        let text = try XCTUnwrap(try kept().first?.text)
        XCTAssertEqual(text.utf8.count, RunOutputBound.closingLineBytes + " … (cut)".utf8.count)
        XCTAssertTrue(text.hasSuffix("t … (cut)"))
    }

    func testNothingIsKeptAfterClose() throws {
        let out = recorder()
        out.close([(.summary, "done")])
        out.printLine("late")
        out.close([(.summary, "again")])
        XCTAssertEqual(try kept().map(\.text), ["done"])
        XCTAssertEqual(console.lines, ["late"])
    }

    /// The journal refusing the output never stops the run: the console says so once.
    func testAJournalThatCannotKeepTheOutputIsReportedOnceAndTheRunGoesOn() throws {
        let out = JournalledOutput(wrapping: console, journal: journal, runID: "run_not_recorded", attempt: 1, masking: .shared)
        for n in 1...(2 * JournalledOutput.batchLines) { out.printLine("n\(n)") }
        out.close([(.summary, "done")])
        XCTAssertEqual(console.lines.count, 2 * JournalledOutput.batchLines)
        let warnings = console.logs.filter { $0.level == .warn }
        XCTAssertEqual(warnings.count, 1, "\(warnings.map(\.message))")
        XCTAssertTrue(warnings.first?.message.hasPrefix("the run's output could not be kept in the journal (") == true)
    }
}
