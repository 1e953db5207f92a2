import Foundation
import Telemetry
import XCTest

/// A readiness check against a database that hangs answers within its deadline and
/// never piles up threads.
final class DeadlineProbeTests: XCTestCase {
    struct Down: Error, CustomStringConvertible { var description: String { "connection refused" } }

    final class Gate: @unchecked Sendable {
        let release = DispatchSemaphore(value: 0)
        let lock = NSLock()
        var started = 0
        func start() { lock.withLock { started += 1 } }
        var count: Int { lock.withLock { started } }
    }

    func testPassingFailingAndHungChecks() {
        XCTAssertNil(DeadlineProbe("the journal", deadline: 5) {}.probe())
        XCTAssertEqual(DeadlineProbe("the journal", deadline: 5) { throw Down() }.probe(),
                       "the journal is not reachable: connection refused")
        let gate = Gate()
        let hung = DeadlineProbe("the journal", deadline: 0.05) {
            gate.start()
            gate.release.wait()
        }
        XCTAssertEqual(hung.probe(), "the journal did not answer within 0.05 s")
        // Probes while the first check still hangs start no other.
        for _ in 0..<5 { XCTAssertEqual(hung.probe(), "the journal did not answer within 0.05 s") }
        XCTAssertEqual(gate.count, 1)
        gate.release.signal()
        // Once it ends, the next probe runs a new check (and waits for its answer).
        let answered = expectation(description: "answered")
        DispatchQueue.global().async {
            var last: String? = "unset"
            for _ in 0..<200 where last != nil {
                gate.release.signal()
                last = hung.probe()
            }
            XCTAssertNil(last)
            answered.fulfill()
        }
        wait(for: [answered], timeout: 30)
        XCTAssertGreaterThanOrEqual(gate.count, 2)
    }
}
