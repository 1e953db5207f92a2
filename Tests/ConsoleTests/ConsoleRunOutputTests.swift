import Foundation
import XCTest
import SystemText
import RunJournal
@testable import Console

/// A run's page shows what the run said (its kept output): hostile text as text, the
/// last lines of a long output with the command that shows them all, and a live view
/// that redraws when the run says something new.
final class ConsoleRunOutputTests: XCTestCase {
    private func start(_ journal: Journal, _ id: String) throws {
        try journal.startRun(RunStart(id: id, recipePath: "/srv/r.lua", recipeSHA256: "ab", paramsJSON: "{}",
                                      profile: "p", mode: .run), masking: SecretRedactor())
    }

    private func line(_ sequence: Int, _ kind: RunOutputKind, _ text: String) -> RunOutputLine {
        RunOutputLine(attempt: 1, sequence: sequence, kind: kind, time: Date(timeIntervalSince1970: 1_796_048_553), text: text)
    }

    func testTheRunPageShowsItsOutputAsText() throws {
        let console = try ConsoleFixture()
        try start(console.journal, "run_out")
        try console.journal.appendOutput(runID: "run_out", [line(1, .print, ConsolePagesTests.hostile),
                                                            line(2, .error, "r.lua:3: boom")], masking: SecretRedactor())
        let cookie = try console.signInWithToken()
        let page = ConsoleFixture.text(console.get("/runs/run_out", cookie: cookie))
        XCTAssertTrue(page.contains("<ol id=\"run-output\" class=\"output\">"), page)
        XCTAssertTrue(page.contains("<span class=\"kind\">print</span> <span class=\"text\"><bdi>\(ConsolePagesTests.hostileShown)</bdi></span>"), page)
        XCTAssertTrue(page.contains("<li class=\"out out-error\" data-attempt=\"1\">"), page)
        XCTAssertFalse(page.contains("<script>alert"))
        XCTAssertFalse(page.contains("run-output-more"))
    }

    func testALongOutputShowsItsLastLinesAndHowToSeeAll() throws {
        let console = try ConsoleFixture()
        try start(console.journal, "run_long")
        let lines = (1...(RunPage.outputLines + 5)).map { line($0, .print, "line \($0)") }
        try console.journal.appendOutput(runID: "run_long", lines, masking: SecretRedactor())
        let cookie = try console.signInWithToken()
        let page = ConsoleFixture.text(console.get("/runs/run_long", cookie: cookie))
        XCTAssertTrue(page.contains("The last \(RunPage.outputLines) of \(RunPage.outputLines + 5) lines"), page)
        XCTAssertTrue(page.contains("hubscript runs show run_long --output"), page)
        XCTAssertFalse(page.contains("<bdi>line 5</bdi>"))
        XCTAssertTrue(page.contains("<bdi>line 6</bdi>"))
        XCTAssertTrue(page.contains("<bdi>line \(RunPage.outputLines + 5)</bdi>"))
    }

    func testARunThatSaysSomethingNewChangesItsFingerprint() throws {
        let console = try ConsoleFixture()
        try start(console.journal, "run_live")
        let before = try XCTUnwrap(console.journal.runActivity(id: "run_live")).fingerprint
        try console.journal.appendOutput(runID: "run_live", [line(1, .print, "hello")], masking: SecretRedactor())
        let after = try XCTUnwrap(console.journal.runActivity(id: "run_live")).fingerprint
        XCTAssertNotEqual(before, after)
    }
}
