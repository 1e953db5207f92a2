import Foundation
import SystemText
import XCTest
import JournalTestSupport
import ScriptHost
@testable import RunJournal
@testable import RecipeModules

/// A write whose outcome is unknown — the connection lost before the Hub committed it,
/// or its response lost after — at any position of a run, then a resume on the same
/// journal: every change happens, each key is sent at most twice (once before, once
/// on resume), and every write ends `done`.
///
/// Nothing is killed here: the first coordinator stops on the thrown error, in process.
/// A real `kill -9` of the CLI, with the journal reopened from disk, is
/// `ResumeAfterKillTests` (hubscriptTests).
final class UnknownOutcomeResumeTests: XCTestCase {
    private let writeCount = 10

    /// A recipe of `writeCount` writes, some identical (usr_ada every third write).
    private func recipe(_ c: WriteCoordinator, _ hub: FakeHub) throws {
        for i in 1...writeCount {
            let intent = i % 3 == 0 ? Fixture.suspend("usr_ada") : Fixture.suspend("usr_\(i)")
            _ = try c.perform(intent, send: hub.send(intent))
        }
    }

    func testAnUnknownOutcomeAtAnyWriteThenResumeDoesEveryChangeOnce() throws {
        try eachJournalBackend { backend in
            for stoppedAt in 1...writeCount {
                for lostAfterCommit in [false, true] {
                    try stopAndResume(at: stoppedAt, lostAfterCommit: lostAfterCommit, backend: backend)
                }
            }
        }
    }

    private func stopAndResume(at k: Int, lostAfterCommit: Bool, backend: JournalBackend) throws {
        let context = "\(backend): unknown outcome at write \(k), response lost after commit: \(lostAfterCommit)"
        let journal = try backend.journal()
        try journal.startRun(Fixture.runStart(), masking: SecretRedactor())
        let hub = FakeHub()
        if lostAfterCommit {
            hub.loseResponseOn = [k]
        } else {
            hub.fault = { n, _ in if n == k { throw FakeConnectionLost() } }
        }
        XCTAssertThrowsError(try recipe(WriteCoordinator(runID: "run_test", mode: .live, journal: journal,
                                                         writeLimit: nil, masking: SecretRedactor()), hub), context) {
            XCTAssertTrue($0 is FakeConnectionLost, "\(context): \($0)")
        }
        XCTAssertEqual(hub.totalSends, k, context)

        hub.fault = { _, _ in }
        hub.loseResponseOn = []
        let resumed = WriteCoordinator(runID: "run_test", mode: .live, journal: journal, writeLimit: nil, masking: SecretRedactor())
        try recipe(resumed, hub)
        XCTAssertEqual(resumed.counts, WriteCounts(writes: writeCount - k + 1, replayed: k - 1), context)

        let writes = try journal.writes(runID: "run_test")
        XCTAssertEqual(writes.count, writeCount, context)
        XCTAssertEqual(Set(writes.map(\.key)).count, writeCount, context)
        XCTAssertTrue(writes.allSatisfy { $0.state == .done }, context)
        XCTAssertTrue(hub.sends.values.allSatisfy { $0 <= 2 }, context)
        XCTAssertEqual(hub.sends.filter { $0.value == 2 }.count, 1, context)
        XCTAssertEqual(Set(hub.sends.keys), Set(writes.map(\.key)), context)
    }
}
