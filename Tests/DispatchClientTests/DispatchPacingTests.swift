import DispatchClient
import Foundation
import HTTPKit
import HubSandbox
import XCTest

/// Sends are paced under the machine token's 600 a minute: a bulk send waits for slots
/// instead of collecting 429s from the sandbox Dispatch at standard limits.
final class DispatchPacingTests: XCTestCase {
    func testThePacerLetsTheBucketGoThenPacesAt97Percent() {
        let clock = ManualClock()
        let pacer = DispatchSendPacer(now: { clock.now().timeIntervalSince1970 })
        for _ in 0..<600 { XCTAssertEqual(pacer.reserve(), 0) }
        XCTAssertEqual(pacer.reserve(), 60 / (600 * DispatchSendPacer.safety), accuracy: 1e-9)
        XCTAssertEqual(DispatchSendPacer(limitPerMinute: 0).reserve(), 0)
    }

    func testALowerReportedLimitAndRemainingPullThePacerDown() {
        let clock = ManualClock()
        let pacer = DispatchSendPacer(now: { clock.now().timeIntervalSince1970 })
        pacer.observe(HTTPHeaders([("RateLimit-Limit", "120"), ("RateLimit-Remaining", "1")]))
        XCTAssertEqual(pacer.limitPerMinute, 120)
        pacer.observe(HTTPHeaders([("RateLimit-Limit", "600"), ("RateLimit-Remaining", "600")]))
        XCTAssertEqual(pacer.limitPerMinute, 120)
        XCTAssertEqual(pacer.reserve(), 0)
        XCTAssertEqual(pacer.reserve(), 60 / (120 * DispatchSendPacer.safety), accuracy: 1e-9)
    }

    func testSevenHundredSendsAtStandardLimitsGetNo429() throws {
        let clock = ManualClock()
        let dispatch = try StoredDispatchSandbox(storage: .memory, rateLimits: .standard, clock: clock)
        let statuses = Statuses()
        let client = try DispatchClient(
            baseURL: URL(string: "http://127.0.0.1:8471")!, token: DispatchOptions.sandboxMachineToken,
            transport: DispatchTransports.function { request, _ in
                let r = dispatch.handle(request)
                statuses.add(r.status)
                return r
            },
            sleep: { clock.advance(by: $0) },
            pacer: DispatchSendPacer(now: { clock.now().timeIntervalSince1970 }))
        let start = clock.now()
        for i in 0..<700 {
            _ = try client.send(try DispatchNotification(title: "n\(i)", body: "b"), idempotencyKey: "k\(i)")
        }
        XCTAssertEqual(statuses.all.count, 700)
        XCTAssertEqual(statuses.all.filter { $0 == 429 }.count, 0)
        // 600 from the bucket, then 100 at 9.7 a second.
        XCTAssertEqual(clock.now().timeIntervalSince(start), 100 / (10 * DispatchSendPacer.safety), accuracy: 0.01)
    }
}

private final class Statuses: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Int] = []
    var all: [Int] { lock.withLock { items } }
    func add(_ s: Int) { lock.withLock { items.append(s) } }
}
