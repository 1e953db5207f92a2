import Foundation
import SystemText
import XCTest
import JournalTestSupport
@testable import RunJournal

/// `Journal.startNewRun` (a new run inserted without reading it back) and
/// `Journal.newRunID`: a new run never lands on another, and the record returned is
/// the one `run(id:)` reads back, on both backends, whatever the clock, the limits, the
/// params (secrets included) or the timing of other journals.
final class NewRunIdentityTests: XCTestCase {
    /// Several journals (as separate processes would open them) start a run under the
    /// same id at once: exactly one records it, the others are refused with
    /// `runIDTaken`, and what the journal holds is the winner's record, attempt 1.
    func testJournalsRacingForOneIDRecordItOnce() throws {
        try eachJournalBackend { backend in
            let location = try backend.newLocation()
            let contenders = 6
            let journals = try (0..<contenders).map { _ in try Journal(location, clock: { Fixture.start }) }
            for round in 0..<8 {
                let id = "run_race_\(round)"
                let results = Results()
                let ready = DispatchGroup()
                let go = DispatchSemaphore(value: 0)
                let done = DispatchGroup()
                for (i, journal) in journals.enumerated() {
                    ready.enter()
                    done.enter()
                    Thread.detachNewThread {
                        var start = Fixture.runStart(id)
                        start.profile = "p\(i)"
                        ready.leave()
                        go.wait()
                        results.add(Result { try journal.startNewRun(start, masking: SecretRedactor()) })
                        done.leave()
                    }
                }
                ready.wait()
                for _ in 0..<contenders { go.signal() }
                done.wait()
                let all = results.all
                let won = all.compactMap { try? $0.get() }
                XCTAssertEqual(won.count, 1, "round \(round): \(all)")
                for case .failure(let error) in all {
                    XCTAssertEqual((error as? JournalError)?.code, .runIDTaken, "\(error)")
                }
                let stored = try journals[0].run(id: id)
                XCTAssertEqual(stored, won.first)
                XCTAssertEqual(stored?.attempts, 1)
            }
        }
    }

    /// `newRunID` and `startNewRun` from two journals whose generators give the same
    /// ids: the loser never resumes the winner's run; starting again it gets a new id.
    func testNewIDsFromTwoJournalsNeverMerge() throws {
        try eachJournalBackend { backend in
            let location = try backend.newLocation()
            let first = try Journal(location, clock: { Fixture.start })
            let second = try Journal(location, clock: { Fixture.start })
            let ids = ["run_a", "run_a", "run_b"]
            var queue1 = ids, queue2 = ids
            let id1 = try first.newRunID(generate: { queue1.removeFirst() })
            let id2 = try second.newRunID(generate: { queue2.removeFirst() })
            XCTAssertEqual(id1, "run_a")
            XCTAssertEqual(id2, "run_a")   // neither holds it yet: the race startNewRun settles
            let winner = try first.startNewRun(Fixture.runStart(id1), masking: SecretRedactor())
            XCTAssertThrowsError(try second.startNewRun(Fixture.runStart(id2, mode: .plan), masking: SecretRedactor())) {
                XCTAssertEqual(($0 as? JournalError)?.code, .runIDTaken)
            }
            XCTAssertEqual(try second.run(id: "run_a"), winner)
            XCTAssertEqual(try second.newRunID(generate: { queue2.removeFirst() }), "run_b")
        }
    }

    /// Clocks of every kind: sub-millisecond fractions on both sides of a half, times
    /// before 1970, far in the future. The returned time is the stored one.
    func testTheReturnedTimeIsTheStoredOneForAnyClock() throws {
        let times: [Double] = [
            1_796_157_627.000_5, 1_796_157_627.000_499_9, 1_796_157_627.999_5, 0.000_5, -0.000_5, -1.000_5, 0,
            -62_135_596_800, 253_402_300_799.999, 4_102_444_800.123_456, 1e12 + 0.000_7, 1_700_000_000.1,
        ]
        try eachJournalBackend { backend in
            for (i, t) in times.enumerated() {
                let journal = try backend.journal(clock: { Date(timeIntervalSince1970: t) })
                let returned = try journal.startNewRun(Fixture.runStart("run_t\(i)"), masking: SecretRedactor())
                XCTAssertEqual(returned, try journal.run(id: "run_t\(i)"), "t = \(t)")
                XCTAssertEqual(returned.startedAt.timeIntervalSince1970, t, accuracy: 0.000_501 + abs(t) * 1e-15, "t = \(t)")
            }
        }
    }

    /// Timeouts and write limits at their edges (NaN, infinities, negatives, huge,
    /// under half a millisecond): what is returned is what is stored.
    func testEdgeLimitsAreReturnedAsStored() throws {
        let timeouts: [Double?] = [nil, .nan, .infinity, -.infinity, -1, 0, 0.000_4, 0.000_5, 1e300, .greatestFiniteMagnitude,
                                   Journal.timeoutCeilingSeconds + 1, 12.345_6, -0.0]
        let writes: [Int?] = [nil, 0, -1, Int.max, Int.min, 1 << 40]
        try eachJournalBackend { backend in
            let journal = try backend.journal()
            for (i, timeout) in timeouts.enumerated() {
                var start = Fixture.runStart("run_to\(i)")
                start.timeoutSeconds = timeout
                start.maxWrites = writes[i % writes.count]
                let returned = try journal.startNewRun(start, masking: SecretRedactor())
                XCTAssertEqual(returned, try journal.run(id: start.id), "timeout \(String(describing: timeout))")
                if let seconds = returned.timeoutSeconds {
                    XCTAssertTrue(seconds.isFinite && seconds >= 0 && seconds <= Journal.timeoutCeilingSeconds, "\(seconds)")
                }
            }
            XCTAssertEqual(try journal.run(id: "run_to1")?.timeoutSeconds, 0, "NaN is stored as 0")
            XCTAssertEqual(try journal.run(id: "run_to2")?.timeoutSeconds, Journal.timeoutCeilingSeconds)
        }
    }

    /// A secret in the params is masked in the journal, and the record returned holds
    /// the same masked text (never the secret), as does the record read back.
    func testSecretsInParamsAreMaskedInTheReturnedRecord() throws {
        let secret = "params-s3cret-\u{e9}\"quote\\"
        let masking = SecretRedactor()
        secret.utf8CString.withUnsafeBytes { masking.register(UnsafeRawBufferPointer(rebasing: $0.dropLast()), name: "PARAM_TOKEN") }
        try eachJournalBackend { backend in
            let journal = try backend.journal()
            var start = Fixture.runStart("run_secret")
            let escaped = #"params-s3cret-\#u{e9}\"quote\\"#   // the secret as JSON text holds it
            start.paramsJSON = #"{"nested":{"list":["x"#  + escaped + #"y"]},"plain":"ok","token":""# + escaped + #""}"#
            let returned = try journal.startNewRun(start, masking: masking)
            let stored = try XCTUnwrap(journal.run(id: "run_secret"))
            XCTAssertEqual(returned, stored)
            XCTAssertEqual(Array(returned.paramsJSON.utf8), Array(stored.paramsJSON.utf8))
            XCTAssertFalse(returned.paramsJSON.contains("s3cret"), returned.paramsJSON)
            XCTAssertEqual(returned.paramsJSON, #"{"nested":{"list":["x<secret PARAM_TOKEN>y"]},"plain":"ok","token":"<secret PARAM_TOKEN>"}"#)
        }
    }

    /// Text fields of unusual Unicode (decomposed accents, astral planes) come back byte
    /// for byte as returned.
    func testUnusualTextIsReturnedAsStored() throws {
        try eachJournalBackend { backend in
            let journal = try backend.journal()
            var start = Fixture.runStart("run_\u{e9}_e\u{301}_\u{1F600}")
            start.recipePath = "recipes/e\u{301}.lua"
            start.profile = "\u{212B}"
            start.outputFolder = "/tmp/\u{10FFFF} x"
            start.paramsJSON = "{\"e\u{301}\":\"\u{e9}\",\"\u{e9}\":\"e\u{301}\"}"
            let returned = try journal.startNewRun(start, masking: SecretRedactor())
            let stored = try XCTUnwrap(journal.run(id: start.id))
            for (a, b) in [(returned.id, stored.id), (returned.recipePath, stored.recipePath), (returned.profile, stored.profile),
                           (returned.outputFolder ?? "", stored.outputFolder ?? ""), (returned.paramsJSON, stored.paramsJSON)] {
                XCTAssertEqual(Array(a.utf8), Array(b.utf8))
            }
            XCTAssertFalse(try journal.runExists(id: "run_e\u{301}_e\u{301}_\u{1F600}"), "ids compare by bytes")
        }
    }

    /// A NUL byte in a text field: SQLite read it back cut at the NUL, and libpq sent it
    /// cut there, while `startNewRun` returned it whole (profile "a\0b" returned, "a"
    /// stored). Now it is refused, with nothing recorded; a NUL inside params arrives JSON-escaped and is stored as given.
    func testNULInTextFieldsIsRefused() throws {
        try eachJournalBackend { backend in
            let journal = try backend.journal()
            var start = Fixture.runStart("run_nul")
            start.profile = "a\u{0}b"
            XCTAssertThrowsError(try journal.startNewRun(start, masking: SecretRedactor())) {
                XCTAssertEqual(($0 as? JournalError)?.code, .unstorableText)
                XCTAssertEqual("\($0)", #"the run's profile "a\0b" holds a NUL byte, which the journal cannot store; nothing was recorded"#)
            }
            start.profile = "default"
            start.outputFolder = "/tmp/x\u{0}y"
            XCTAssertThrowsError(try journal.startNewRun(start, masking: SecretRedactor())) {
                XCTAssertEqual("\($0)", #"the run's output folder "/tmp/x\0y" holds a NUL byte, which the journal cannot store; nothing was recorded"#)
            }
            XCTAssertNil(try journal.run(id: "run_nul"))
            start.outputFolder = nil
            start.paramsJSON = #"{"k":"v\u0000w"}"#
            let returned = try journal.startNewRun(start, masking: SecretRedactor())
            XCTAssertEqual(returned, try journal.run(id: "run_nul"))
            XCTAssertEqual(returned.paramsJSON, #"{"k":"v\u0000w"}"#)
        }
    }
}

/// Results gathered from threads.
private final class Results: @unchecked Sendable {
    private let lock = NSLock()
    private var results: [Result<RunRecord, Error>] = []
    func add(_ r: Result<RunRecord, Error>) { lock.withLock { results.append(r) } }
    var all: [Result<RunRecord, Error>] { lock.withLock { results } }
}
