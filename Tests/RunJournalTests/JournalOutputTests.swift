import Foundation
import SQLiteKit
import SystemText
import XCTest
import JournalTestSupport
@testable import RunJournal

/// A run's kept output (`Journal+Output`) and the paged read of its writes, on both
/// backends.
final class JournalOutputTests: XCTestCase {
    func line(_ seq: Int, _ kind: RunOutputKind = .print, _ text: String? = nil, attempt: Int = 1) -> RunOutputLine {
        RunOutputLine(attempt: attempt, sequence: seq, kind: kind,
                      time: Self.time(seq), text: text ?? "line \(seq)")
    }

    /// `seq` ms after the fixture's start, as the journal reads a time back (whole ms).
    static func time(_ ms: Int) -> Date {
        Date(timeIntervalSince1970: Double(Int(Fixture.start.timeIntervalSince1970) * 1000 + ms) / 1000)
    }

    func testLinesComeBackInTheirOrderWithEveryField() throws {
        try eachJournalBackend { backend in
            let journal = try backend.journal()
            try journal.startRun(Fixture.runStart("run_o"), masking: .shared)
            // Appended out of order, in two batches: read back by sequence.
            try journal.appendOutput(runID: "run_o", [line(3, .logWarn, "careful k=v"), line(1, .print, "hello\n\tworld")], masking: .shared)
            try journal.appendOutput(runID: "run_o", [line(2, .summary, "succeeded (exit 0)", attempt: 2)], masking: .shared)
            let lines = try journal.output(runID: "run_o")
            XCTAssertEqual(lines, [line(1, .print, "hello\n\tworld"), line(2, .summary, "succeeded (exit 0)", attempt: 2),
                                   line(3, .logWarn, "careful k=v")])
            XCTAssertEqual(lines[0].time, Self.time(1))
            XCTAssertEqual(lines.map(\.kind), [.print, .summary, .logWarn])
            XCTAssertEqual(try journal.output(runID: "run_other"), [])
        }
    }

    func testPagesAndTailReadOnlyWhatTheyShow() throws {
        try eachJournalBackend { backend in
            let journal = try backend.journal()
            try journal.startRun(Fixture.runStart("run_o"), masking: .shared)
            try journal.appendOutput(runID: "run_o", (1...100).map { line($0) }, masking: .shared)
            XCTAssertEqual(try journal.output(runID: "run_o", offset: 10, limit: 3).map(\.sequence), [11, 12, 13])
            XCTAssertEqual(try journal.output(runID: "run_o", offset: 98).map(\.sequence), [99, 100])
            XCTAssertEqual(try journal.output(runID: "run_o", offset: 500, limit: 3), [])
            XCTAssertEqual(try journal.outputTail(runID: "run_o", count: 3).map(\.sequence), [98, 99, 100])
            XCTAssertEqual(try journal.outputTail(runID: "run_o", count: 1000).count, 100)
        }
    }

    func testTotalsCountRecipeOutputApartFromTheClosingLines() throws {
        try eachJournalBackend { backend in
            let journal = try backend.journal()
            try journal.startRun(Fixture.runStart("run_o"), masking: .shared)
            XCTAssertEqual(try journal.outputTotals(runID: "run_o"), RunOutputTotals())
            try journal.appendOutput(runID: "run_o", [
                line(1, .print, "abc"), line(2, .logDebug, "é"), line(3, .logInfo, ""), line(4, .logError, "x"),
                line(5, .warning, "warning: w"), line(6, .error, "error: e"), line(7, .truncated, "output truncated"),
                line(8, .summary, "failed"),
            ], masking: .shared)
            // 3 + 2 ("é" is two bytes in UTF-8) + 0 + 1.
            XCTAssertEqual(try journal.outputTotals(runID: "run_o"),
                           RunOutputTotals(recipeLines: 4, recipeBytes: 6, lines: 8, lastSequence: 8))
        }
    }

    func testALineAlreadyKeptIsNotRepeatedByARetriedBatch() throws {
        try eachJournalBackend { backend in
            let journal = try backend.journal()
            try journal.startRun(Fixture.runStart("run_o"), masking: .shared)
            try journal.appendOutput(runID: "run_o", [line(1, .print, "first")], masking: .shared)
            try journal.appendOutput(runID: "run_o", [line(1, .print, "again"), line(2)], masking: .shared)
            XCTAssertEqual(try journal.output(runID: "run_o").map(\.text), ["first", "line 2"])
        }
    }

    /// Neither backend keeps text past a NUL; a secret registered for masking is masked
    /// even if the caller did not mask it.
    func testNULBytesAndSecretsNeverReachTheStore() throws {
        let secret = "s3cr3t-\(UUID().uuidString)"
        Array(secret.utf8).withUnsafeBytes { SecretRedactor.shared.register($0, name: "journal-output-test") }
        try eachJournalBackend { backend in
            let journal = try backend.journal()
            try journal.startRun(Fixture.runStart("run_o"), masking: .shared)
            try journal.appendOutput(runID: "run_o", [line(1, .print, "a\0b"), line(2, .logInfo, "key=\(secret) end")], masking: .shared)
            XCTAssertEqual(try journal.output(runID: "run_o").map(\.text),
                           ["a\u{FFFD}b", "key=<secret journal-output-test> end"])
        }
    }

    func testOutputForAnUnknownRunIsRefused() throws {
        try eachJournalBackend { backend in
            let journal = try backend.journal()
            XCTAssertThrowsError(try journal.appendOutput(runID: "run_missing", [line(1)], masking: .shared))
        }
    }

    func testWritesArePagedInTheOrderTheRunFirstMadeThem() throws {
        try eachJournalBackend { backend in
            var now = Fixture.start
            let clock = OutputTestClock()
            let journal = try backend.journal(clock: { clock.now })
            try journal.startRun(Fixture.runStart("run_w"), masking: .shared)
            // Pass 1 makes writes 1…5 (the pass's sequence 1…5); pass 2 adds two more
            // with its own sequence 1 and 2, a second later.
            for n in 1...5 {
                try journal.recordPending(runID: "run_w", sequence: n, key: "k\(n)", method: "POST", path: "/p/\(n)", bodySHA256: nil)
            }
            now = now.addingTimeInterval(1)
            clock.now = now
            for n in 1...2 {
                try journal.recordPending(runID: "run_w", sequence: n, key: "later\(n)", method: "POST", path: "/q/\(n)", bodySHA256: nil)
            }
            XCTAssertEqual(try journal.writeCount(runID: "run_w"), 7)
            XCTAssertEqual(try journal.writesInRunOrder(runID: "run_w", offset: 0, limit: 100).map(\.key),
                           ["k1", "k2", "k3", "k4", "k5", "later1", "later2"])
            XCTAssertEqual(try journal.writesInRunOrder(runID: "run_w", offset: 4, limit: 2).map(\.key), ["k5", "later1"])
            XCTAssertEqual(try journal.writesInRunOrder(runID: "run_w", offset: 7, limit: 2), [])
            XCTAssertEqual(try journal.writeCount(runID: "run_none"), 0)
        }
    }

    /// Staged lines cost no commit of their own: another connection sees them once the
    /// run's end is committed, with it.
    func testStagedLinesAreCommittedWithTheNextCommit() throws {
        try eachJournalBackend { backend in
            let location = try backend.newLocation()
            let writer = try Journal(location), reader = try Journal(location)
            try writer.startRun(Fixture.runStart("run_s"), masking: .shared)
            writer.stageOutput(runID: "run_s", [line(1, .print, "said"), line(2, .summary, "succeeded (exit 0)")], masking: .shared)
            XCTAssertEqual(try reader.output(runID: "run_s"), [], "not committed yet")
            try writer.finishRun(id: "run_s", status: .succeeded)
            XCTAssertEqual(try reader.output(runID: "run_s").map(\.text), ["said", "succeeded (exit 0)"])
            // A flush commits what is staged too (a journal released before its next commit).
            writer.stageOutput(runID: "run_s", [line(3, .print, "late")], masking: .shared)
            try writer.flush()
            XCTAssertEqual(try reader.output(runID: "run_s").map(\.sequence), [1, 2, 3])
        }
    }

    /// A journal made by the version before kept output gets the table at its next open,
    /// its runs intact.
    func testAnOlderSQLiteJournalGainsTheOutputTable() throws {
        let dir = try Fixture.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("journal.sqlite").path
        do {
            let raw = try SQLiteDatabase(path: path)
            for step in JournalSchema.migrations.prefix(7) { try raw.exec(step) }
            try raw.exec("PRAGMA user_version = 7")
            try raw.exec("""
                INSERT INTO runs (id, recipe_path, recipe_sha256, params, profile, mode, status, started_at)
                VALUES ('run_old', 'r.lua', 'ab', '{}', 'default', 'run', 'succeeded', 1)
                """)
        }
        let journal = try Journal(path: path)
        XCTAssertEqual(try journal.run(id: "run_old")?.status, .succeeded)
        XCTAssertEqual(try journal.output(runID: "run_old"), [])
        try journal.appendOutput(runID: "run_old", [line(1)], masking: .shared)
        XCTAssertEqual(try journal.outputTotals(runID: "run_old").lines, 1)
    }
}

/// A clock a test moves by hand.
final class OutputTestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var value = Fixture.start
    var now: Date {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}
