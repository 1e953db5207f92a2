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
        // The first check hangs until released; later ones answer at once.
        let hung = DeadlineProbe("the journal", deadline: 0.2) {
            gate.start()
            if gate.count == 1 { gate.release.wait() }
        }
        XCTAssertEqual(hung.probe(), "the journal did not answer within 0.2 s")
        // Probes while the first check still hangs start no other.
        for _ in 0..<5 { XCTAssertEqual(hung.probe(), "the journal did not answer within 0.2 s") }
        XCTAssertEqual(gate.count, 1)
        gate.release.signal()
        // Once it ends, a probe answers again, and the next starts a new check.
        var answers: [String?] = []
        for _ in 0..<100 where !(gate.count >= 2 && answers.last == .some(nil)) { answers.append(hung.probe()) }
        XCTAssertEqual(answers.last, .some(nil), "\(answers)")
        XCTAssertGreaterThanOrEqual(gate.count, 2)
    }
}
