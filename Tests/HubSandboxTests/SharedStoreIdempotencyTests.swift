import Foundation
import XCTest
@testable import HubSandbox

/// Two sandboxes on one store file stand for two processes (`sandbox serve` and an
/// embedded run): each has its own lock and SQLite connection, so only the store's
/// transactions order them. An idempotency key must run once across both.
final class SharedStoreIdempotencyTests: XCTestCase {
    func testTwoSandboxesSharingAFileNeverBothRunOneKey() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("shared-idem-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("sandbox.sqlite")
        let clock = ManualClock()
        let first = try makeHub(clock: clock, storage: .file(file))
        let second = try makeHub(clock: clock, storage: .file(file))
        let keys = 150
        let answers = AnswerLog()
        for k in 0..<keys {
            let body = #"{"user_id":"usr_ada","title":"race-\#(k)","body":"b","category":"test.race"}"#
            let start = DispatchSemaphore(value: 0)
            let group = DispatchGroup()
            for hub in [first, second] {
                group.enter()
                Thread.detachNewThread {
                    start.wait()
                    let r = hub.call("POST", "/applications/app_hub/notifications", body: body, headers: [("Idempotency-Key", "race-\(k)")])
                    answers.add(k, r.status, r.code, replayed: r.headers["Idempotent-Replayed"] == "true")
                    group.leave()
                }
            }
            start.signal()
            start.signal()
            group.wait()
        }
        for k in 0..<keys {
            let count = try first.engine.db.first("SELECT COUNT(*) FROM notifications WHERE title = ?", [.text("race-\(k)")]) { $0.int(0) }
            XCTAssertEqual(count, 1, "key race-\(k) ran \(count ?? 0) times: \(answers.of(k))")
        }
        // Each pair: one 201 that ran, and a replay or 409 idempotency_key_in_flight.
        for k in 0..<keys {
            let pair = answers.of(k)
            XCTAssertEqual(pair.filter { $0.status == 201 && !$0.replayed }.count, 1, "\(pair)")
            XCTAssertTrue(pair.allSatisfy { ($0.status == 201) || $0.code == "idempotency_key_in_flight" }, "\(pair)")
        }
    }
}

private final class AnswerLog: @unchecked Sendable {
    struct Answer: CustomStringConvertible {
        let status: Int, code: String?, replayed: Bool
        var description: String { "\(status) \(code ?? "")\(replayed ? " (replayed)" : "")" }
    }
    private let lock = NSLock()
    private var answers: [Int: [Answer]] = [:]
    func add(_ k: Int, _ status: Int, _ code: String?, replayed: Bool) {
        lock.withLock { answers[k, default: []].append(Answer(status: status, code: code, replayed: replayed)) }
    }
    func of(_ k: Int) -> [Answer] { lock.withLock { answers[k] ?? [] } }
}
