import Foundation
import SystemText
import XCTest
import JournalTestSupport
import ScriptHost
@testable import RunJournal
@testable import RecipeModules

final class IdempotencyKeyTests: XCTestCase {
    func testSHA256MatchesKnownVectors() {
        XCTAssertEqual(Digest.sha256Hex(Data()), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertEqual(Digest.sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(Digest.sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        let twoBlocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
        XCTAssertEqual(Digest.sha256Hex(twoBlocks), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        XCTAssertEqual(Digest.sha256Hex(Data(twoBlocks.utf8)), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        XCTAssertEqual(Digest.sha256Hex(Data(repeating: 0x61, count: 1_000_000)),
                       "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    func testDerivedKeysAreStableAndMatchTheGoldenValues() {
        let body = #"{"reason":"offboarded"}"#
        let first = IdempotencyKey.derive(runID: "run_test", method: "POST", path: "/users/usr_ada/suspend",
                                          canonicalBody: body, occurrence: 0)
        XCTAssertEqual(first, "hs1-c5f9f66908a0b76e10f9bceb615a0748705c6b4a")
        XCTAssertEqual(first, IdempotencyKey.derive(runID: "run_test", method: "POST", path: "/users/usr_ada/suspend",
                                                    canonicalBody: body, occurrence: 0))
        XCTAssertEqual(IdempotencyKey.derive(runID: "run_test", method: "POST", path: "/users/usr_ada/suspend",
                                             canonicalBody: body, occurrence: 1),
                       "hs1-2626ef473f18efe9892e3c4e517b663ab927dde6")
        XCTAssertEqual(IdempotencyKey.derive(runID: "run_test", method: "DELETE", path: "/users/usr_ada/sessions/ses_1",
                                             canonicalBody: "", occurrence: 0),
                       "hs1-daa4755954b2f1827ceba93d3423551dc4d5f870")
        XCTAssertNotEqual(first, IdempotencyKey.derive(runID: "run_other", method: "POST", path: "/users/usr_ada/suspend",
                                                       canonicalBody: body, occurrence: 0))
        XCTAssertEqual(first.count, 44)
    }

    func testTheCoordinatorDerivesFromCanonicalBodiesAndCountsOccurrences() throws {
        try eachJournalBackend { backend in
            let journal = try backend.journal()
            try journal.startRun(Fixture.runStart(), masking: SecretRedactor())
            let coordinator = WriteCoordinator(runID: "run_test", mode: .plan, journal: journal, writeLimit: nil, masking: SecretRedactor())
            let a = try coordinator.perform(Fixture.suspend("usr_ada")) { _ in XCTFail("sent"); return .nilValue }
            let b = try coordinator.perform(Fixture.suspend("usr_ada")) { _ in .nilValue }
            let c = try coordinator.perform(Fixture.suspend("usr_ada", key: "evt_123")) { _ in .nilValue }
            XCTAssertEqual(a.key, "hs1-c5f9f66908a0b76e10f9bceb615a0748705c6b4a")
            XCTAssertEqual(b.key, "hs1-2626ef473f18efe9892e3c4e517b663ab927dde6")
            XCTAssertEqual(c.key, "evt_123")
        }
    }

    func testAnExplicitKeyMustBeSendable() throws {
        try eachJournalBackend { backend in
            let journal = try backend.journal()
            let coordinator = WriteCoordinator(runID: "run_test", mode: .plan, journal: journal, writeLimit: nil, masking: SecretRedactor())
            XCTAssertThrowsError(try coordinator.perform(Fixture.suspend("usr_ada", key: "")) { _ in .nilValue }) { error in
                XCTAssertEqual((error as? ScriptStructuredError)?.code, "invalid_idempotency_key")
            }
            XCTAssertEqual(coordinator.performed, 0)
        }
    }

    func testRunIDs() {
        var rng = FixedGenerator(value: 0x9f3a)
        XCTAssertEqual(RunID.generate(now: Fixture.start, using: &rng), "run_20261130T142233Z_9f3a")
        rng = FixedGenerator(value: 0x00a)
        XCTAssertEqual(RunID.generate(now: Fixture.start, using: &rng), "run_20261130T142233Z_000a")
        let scheduled = Date(timeIntervalSince1970: 1_796_004_000)  // 2026-11-30T02:00:00Z
        XCTAssertEqual(RunID.forJob(name: "nightly-audit", scheduledAt: scheduled), "job_nightly-audit_20261130T020000Z")
        XCTAssertEqual(RunID.forJob(name: "nightly audit", scheduledAt: scheduled),
                       "job_nightly-audit-255600ab_20261130T020000Z")
    }
}

/// A random source that always yields the same 64 bits.
struct FixedGenerator: RandomNumberGenerator {
    let value: UInt64
    mutating func next() -> UInt64 { value }
}
