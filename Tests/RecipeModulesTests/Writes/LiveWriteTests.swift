import Foundation
import SystemText
import XCTest
import JournalTestSupport
import ScriptHost
@testable import RunJournal
@testable import RecipeModules

final class LiveWriteTests: XCTestCase {
    private func coordinator(_ journal: Journal, limit: Int? = nil) -> WriteCoordinator {
        WriteCoordinator(runID: "run_test", mode: .live, journal: journal, writeLimit: limit, masking: SecretRedactor())
    }

    private func perform(_ c: WriteCoordinator, _ hub: FakeHub, _ intent: WriteIntent) throws -> WriteResult {
        try c.perform(intent, send: hub.send(intent))
    }

    func testEachKeyIsSentOnceAndJournalledDone() throws {
        try eachJournalBackend { backend in
            let journal = try backend.journal()
            try journal.startRun(Fixture.runStart(), masking: SecretRedactor())
            let hub = FakeHub()
            let c = coordinator(journal)
            let a = try perform(c, hub, Fixture.suspend("usr_ada"))
            let b = try perform(c, hub, Fixture.revokeSession("usr_ada", "ses_1"))
            let again = try perform(c, hub, Fixture.suspend("usr_ada"))
            XCTAssertEqual(a.value, ["path": "/users/usr_ada/suspend", "ok": true])
            XCTAssertFalse(a.replayed || a.planned)
            XCTAssertNotEqual(a.key, again.key)
            XCTAssertEqual(hub.sendOrder, [a.key, b.key, again.key])
            XCTAssertEqual(c.counts, WriteCounts(writes: 3))
            let writes = try journal.writes(runID: "run_test")
            XCTAssertEqual(writes.map(\.key), [a.key, b.key, again.key])
            XCTAssertEqual(writes.map(\.sequence), [1, 2, 3])
            XCTAssertTrue(writes.allSatisfy { $0.state == .done && $0.attempts == 1 })
            XCTAssertEqual(writes[0].bodySHA256, Digest.sha256Hex(#"{"reason":"offboarded"}"#))
            XCTAssertEqual(c.finish(), [])
        }
    }

    func testPendingIsCommittedBeforeSendingAndTheOutcomeWithTheNextWrite() throws {
        try eachJournalBackend { backend in
            let location = try backend.newLocation()
            let journal = try Journal(location)
            try journal.startRun(Fixture.runStart(), masking: SecretRedactor())
            let observer = try Journal(location)  // another connection, as after a crash
            let c = coordinator(journal)
            var seen: [[WriteState?]] = []
            let first = try c.perform(Fixture.suspend("usr_ada")) { key in
                seen.append([try observer.write(runID: "run_test", key: key)?.state])
                return ["status": "suspended"]
            }
            // Staged, not committed: a crash now would resend the write (the Hub replays it).
            XCTAssertEqual(try observer.write(runID: "run_test", key: first.key)?.state, .pending)
            let second = try c.perform(Fixture.suspend("usr_bob")) { key in
                // The first outcome committed in the same transaction as this write's pending row.
                seen.append([try observer.write(runID: "run_test", key: first.key)?.state,
                             try observer.write(runID: "run_test", key: key)?.state])
                return ["status": "suspended"]
            }
            XCTAssertEqual(seen, [[.pending], [.done, .pending]])
            try c.commitOutcomes()
            XCTAssertEqual(try observer.write(runID: "run_test", key: second.key)?.state, .done)
        }
    }

    func testAStagedOutcomeIsCommittedBeforeAnyReadAndAtTheRunsEnd() throws {
        try eachJournalBackend { backend in
            let location = try backend.newLocation()
            let journal = try Journal(location)
            try journal.startRun(Fixture.runStart(), masking: SecretRedactor())
            let observer = try Journal(location)
            let c = coordinator(journal)
            let a = try c.perform(Fixture.suspend("usr_ada")) { _ in ["status": "suspended"] }
            XCTAssertEqual(try journal.write(runID: "run_test", key: a.key)?.state, .done)   // a read flushes
            XCTAssertEqual(try observer.write(runID: "run_test", key: a.key)?.state, .done)
            let b = try c.perform(Fixture.suspend("usr_bob")) { _ in ["status": "suspended"] }
            try journal.finishRun(id: "run_test", status: .succeeded)
            XCTAssertEqual(try observer.write(runID: "run_test", key: b.key)?.state, .done)
        }
    }

    func testAResumeReplaysDoneWritesAndResendsPendingOnesWithTheSameKey() throws {
        try eachJournalBackend { backend in
            let journal = try backend.journal()
            try journal.startRun(Fixture.runStart(), masking: SecretRedactor())
            let hub = FakeHub()
            hub.fault = { n, _ in if n == 2 { throw FakeConnectionLost() } }
            let first = coordinator(journal)
            let done = try perform(first, hub, Fixture.suspend("usr_ada"))
            XCTAssertThrowsError(try perform(first, hub, Fixture.revokeSession("usr_ada", "ses_1"))) {
                XCTAssertTrue($0 is FakeConnectionLost, "\($0)")
            }
            XCTAssertEqual(first.counts, WriteCounts(writes: 2, failed: 1))
            let lost = hub.sendOrder[1]
            XCTAssertEqual(try journal.write(runID: "run_test", key: lost)?.state, .pending)

            hub.fault = { _, _ in }
            let resumed = coordinator(journal)
            let replay = try resumed.perform(Fixture.suspend("usr_ada")) { _ in
                XCTFail("a done write was sent again")
                return .nilValue
            }
            XCTAssertEqual(replay, WriteResult(value: done.value, key: done.key, replayed: true, planned: false))
            let resent = try perform(resumed, hub, Fixture.revokeSession("usr_ada", "ses_1"))
            XCTAssertEqual(resent.key, lost)
            XCTAssertFalse(resent.replayed)
            XCTAssertEqual(hub.sends[lost], 2)
            XCTAssertEqual(resumed.counts, WriteCounts(writes: 1, replayed: 1))
            let record = try XCTUnwrap(journal.write(runID: "run_test", key: lost))
            XCTAssertEqual(record.state, .done)
            XCTAssertEqual(record.attempts, 2)
        }
    }

    func testAResponseWithoutBodyReplaysAsNil() throws {
        try eachJournalBackend { backend in
            let journal = try backend.journal()
            try journal.startRun(Fixture.runStart(), masking: SecretRedactor())
            let intent = Fixture.revokeSession("usr_ada", "ses_1")
            _ = try coordinator(journal).perform(intent) { _ in .nilValue }
            let replay = try coordinator(journal).perform(intent) { _ in .string("sent") }
            XCTAssertEqual(replay.value, .nilValue)
            XCTAssertTrue(replay.replayed)
        }
    }

    func testADefiniteFailureIsJournalledFailedAndRethrown() throws {
        try eachJournalBackend { backend in
            let journal = try backend.journal()
            try journal.startRun(Fixture.runStart(), masking: SecretRedactor())
            let c = coordinator(journal)
            XCTAssertThrowsError(try c.perform(Fixture.suspend("usr_ada")) { _ in throw FakeRejection(httpStatus: 422) }) {
                XCTAssertEqual(($0 as? FakeRejection)?.httpStatus, 422)
            }
            XCTAssertEqual(c.counts, WriteCounts(writes: 1, failed: 1))
            let record = try XCTUnwrap(journal.writes(runID: "run_test").first)
            XCTAssertEqual(record.state, .failed)
            XCTAssertEqual(record.httpStatus, 422)
            XCTAssertEqual(record.error, "validation_failed (422)")
            // A failed write is not replayed: a resume sends it again (same key).
            var sent: [String] = []
            _ = try coordinator(journal).perform(Fixture.suspend("usr_ada")) { sent.append($0); return .nilValue }
            XCTAssertEqual(sent, [record.key])
        }
    }

    func testAnExplicitKeyReusedForAnotherWriteIsRefusedUnsent() throws {
        try eachJournalBackend { backend in
            let journal = try backend.journal()
            try journal.startRun(Fixture.runStart(), masking: SecretRedactor())
            let hub = FakeHub()
            let c = coordinator(journal)
            _ = try perform(c, hub, Fixture.suspend("usr_ada", key: "evt_1"))
            let same = try perform(c, hub, Fixture.suspend("usr_ada", key: "evt_1"))
            XCTAssertTrue(same.replayed)
            XCTAssertThrowsError(try perform(c, hub, Fixture.suspend("usr_bob", key: "evt_1"))) { error in
                XCTAssertEqual((error as? ScriptStructuredError)?.code, "idempotency_key_reused")
            }
            XCTAssertEqual(hub.totalSends, 1)
        }
    }

    func testTheWriteLimitStopsBeforeTheExcessWrite() throws {
        try eachJournalBackend { backend in
            let journal = try backend.journal()
            try journal.startRun(Fixture.runStart(), masking: SecretRedactor())
            let hub = FakeHub()
            let c = coordinator(journal, limit: 2)
            _ = try perform(c, hub, Fixture.suspend("usr_ada"))
            _ = try perform(c, hub, Fixture.suspend("usr_bob"))
            XCTAssertLimitError(
                "limit exceeded: writes: the recipe's limit is 2 (limits.writes / --max-writes); stopped before write 3: POST /users/usr_carol/suspend"
            ) { try perform(c, hub, Fixture.suspend("usr_carol")) }
            XCTAssertEqual(hub.totalSends, 2)
            XCTAssertEqual(try journal.writes(runID: "run_test").count, 2)
        }
    }

    /// The limit bounds the run, not each pass: a pass that decides on other writes than
    /// the pass before it (live data changed, or its reads were not recorded) may make
    /// only what the limit leaves, and a failed or pending write of an earlier pass is
    /// not a new one.
    func testTheLimitCountsTheWritesOfEveryPass() throws {
        try eachJournalBackend { backend in
            let journal = try backend.journal()
            try journal.startRun(Fixture.runStart(), masking: SecretRedactor())
            let hub = FakeHub()
            let first = coordinator(journal, limit: 3)
            for user in ["usr_a", "usr_b", "usr_c"] { _ = try perform(first, hub, Fixture.suspend(user)) }
            XCTAssertThrowsError(try perform(first, hub, Fixture.suspend("usr_d")))

            // Another pass that wants other users: nothing new under the same limit.
            let second = coordinator(journal, limit: 3)
            XCTAssertLimitError(
                "limit exceeded: writes: the recipe's limit is 3 (limits.writes / --max-writes); stopped before write 4: POST /users/usr_d/suspend"
                    + " (counted over the whole run: 3 writes in earlier passes; resume with a higher --max-writes to go on)"
            ) { try perform(second, hub, Fixture.suspend("usr_d")) }
            XCTAssertEqual(hub.totalSends, 3)

            // A limit of 5 over the run leaves 2: usr_d and usr_e, then the sixth is refused.
            let third = coordinator(journal, limit: 5)
            XCTAssertTrue(try perform(third, hub, Fixture.suspend("usr_a")).replayed, "an earlier pass's write is not new")
            _ = try perform(third, hub, Fixture.suspend("usr_d"))
            _ = try perform(third, hub, Fixture.suspend("usr_e"))
            XCTAssertThrowsError(try perform(third, hub, Fixture.suspend("usr_f")))
            XCTAssertEqual(hub.totalSends, 5)
            XCTAssertEqual(Set(try journal.writes(runID: "run_test").map(\.path)),
                           Set(["a", "b", "c", "d", "e"].map { "/users/usr_\($0)/suspend" }))
        }
    }

    func testReplayedWritesCountAgainstTheLimit() throws {
        try eachJournalBackend { backend in
            let journal = try backend.journal()
            try journal.startRun(Fixture.runStart(), masking: SecretRedactor())
            let hub = FakeHub()
            let first = coordinator(journal)
            _ = try perform(first, hub, Fixture.suspend("usr_ada"))
            let resumed = coordinator(journal, limit: 1)
            XCTAssertTrue(try perform(resumed, hub, Fixture.suspend("usr_ada")).replayed)
            XCTAssertLimitError(
                "limit exceeded: writes: the recipe's limit is 1 (limits.writes / --max-writes); stopped before write 2: DELETE /users/usr_ada/sessions/ses_1"
                    + " (counted over the whole run: 1 write in earlier passes; resume with a higher --max-writes to go on)"
            ) { try perform(resumed, hub, Fixture.revokeSession("usr_ada", "ses_1")) }
            XCTAssertEqual(hub.totalSends, 1)
        }
    }

    func testALimitOfZeroStopsBeforeTheFirstWrite() throws {
        try eachJournalBackend { backend in
            let c = coordinator(try backend.journal(), limit: 0)
            XCTAssertLimitError(
                "limit exceeded: writes: the recipe's limit is 0 (limits.writes / --max-writes); stopped before write 1: POST /users/usr_ada/suspend"
            ) { try c.perform(Fixture.suspend("usr_ada")) { _ in .nilValue } }
        }
    }
}
