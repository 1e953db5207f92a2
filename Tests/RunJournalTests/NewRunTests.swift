import Foundation
import SystemText
import XCTest
import JournalTestSupport
@testable import RunJournal

/// A new run is recorded without being read back (`Journal.startNewRun`), and a new id
/// never lands on a run the journal holds (`Journal.newRunID`).
final class NewRunTests: XCTestCase {
    /// The record `startNewRun` returns is the one the journal gives back, to the
    /// millisecond it stores times in.
    func testTheReturnedRecordIsTheStoredOne() throws {
        let clock: @Sendable () -> Date = { Date(timeIntervalSince1970: 1_796_157_627.123_456_7) }
        try eachJournalBackend { backend in
            let journal = try backend.journal(clock: clock)
            var start = Fixture.runStart("run_new")
            start.outputFolder = "/tmp/out/run_new"
            start.maxWrites = 7
            start.timeoutSeconds = 1.234_56
            let returned = try journal.startNewRun(start, masking: SecretRedactor())
            XCTAssertEqual(returned, try journal.run(id: "run_new"))
            XCTAssertEqual(returned.timeoutSeconds, 1.235)
            XCTAssertEqual(returned.status, .running)
            XCTAssertEqual(returned.attempts, 1)

            let bare = try journal.startNewRun(Fixture.runStart("run_bare", mode: .plan), masking: SecretRedactor())
            XCTAssertEqual(bare, try journal.run(id: "run_bare"))
            XCTAssertNil(bare.timeoutSeconds)
            XCTAssertNil(bare.outputFolder)
        }
    }

    /// An id already held is refused with its own code, and the run holding it is left
    /// as it was: a new run never becomes a resume of another.
    func testAnIDAlreadyHeldIsRefusedAndTheRunKept() throws {
        try eachJournalBackend { backend in
            let journal = try backend.journal()
            try journal.startRun(Fixture.runStart("run_taken"), masking: SecretRedactor())
            try journal.finishRun(id: "run_taken", status: .succeeded, counts: RunCounts(reads: 2, writes: 1), exitCode: 0)
            let before = try journal.run(id: "run_taken")
            var other = Fixture.runStart("run_taken")
            other.recipePath = "recipes/other.lua"
            XCTAssertThrowsError(try journal.startNewRun(other, masking: SecretRedactor())) { error in
                XCTAssertEqual((error as? JournalError)?.code, .runIDTaken)
                XCTAssertEqual("\(error)", "another run took the id run_taken as this one started; nothing was recorded: start the recipe again")
            }
            XCTAssertEqual(try journal.run(id: "run_taken"), before)
            XCTAssertTrue(try journal.runExists(id: "run_taken"))
            XCTAssertFalse(try journal.runExists(id: "run_other"))
        }
    }

    /// `finishRun` with counts stores the status, time, exit code and counts together.
    func testFinishWithCountsStoresEverything() throws {
        try eachJournalBackend { backend in
            let journal = try backend.journal()
            try journal.startNewRun(Fixture.runStart("run_f"), masking: SecretRedactor())
            try journal.finishRun(id: "run_f", status: .failed,
                                  counts: RunCounts(reads: 5, writes: 4, replayed: 3, planned: 2, failed: 1), exitCode: 1)
            let run = try XCTUnwrap(journal.run(id: "run_f"))
            XCTAssertEqual(run.status, .failed)
            XCTAssertEqual(run.exitCode, 1)
            XCTAssertEqual(run.finishedAt, Fixture.start)
            XCTAssertEqual(run.counts, RunCounts(reads: 5, writes: 4, replayed: 3, planned: 2, failed: 1))
            XCTAssertThrowsError(try journal.finishRun(id: "run_nope", status: .failed, counts: RunCounts(), exitCode: 1)) {
                XCTAssertEqual(($0 as? JournalError)?.code, .unknownRun)
            }
        }
    }

    /// A generated id the journal holds is passed over for the next one.
    func testANewIDSkipsIDsTheJournalHolds() throws {
        let journal = try Journal.inMemory(clock: { Fixture.start })
        try journal.startRun(Fixture.runStart("run_a"), masking: SecretRedactor())
        try journal.startRun(Fixture.runStart("run_b"), masking: SecretRedactor())
        var queue = ["run_a", "run_b", "run_c"]
        XCTAssertEqual(try journal.newRunID(generate: { queue.removeFirst() }), "run_c")
        XCTAssertThrowsError(try journal.newRunID(generate: { "run_a" })) {
            XCTAssertEqual("\($0)", "could not find a run id the journal does not hold in 16 tries; is the clock right? (date -u)")
        }
    }
}
