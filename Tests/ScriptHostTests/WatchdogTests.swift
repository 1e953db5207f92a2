import Foundation
import XCTest
@testable import ScriptHost

/// The run's deadline thread: its action runs once at its time, never after `disarm`.
final class WatchdogTests: XCTestCase {
    func testTheActionRunsAtItsDeadline() throws {
        let fired = expectation(description: "fired")
        let start = MonotonicClock.now()
        let watchdog = try Watchdog(seconds: 0.1) { fired.fulfill() }
        wait(for: [fired], timeout: 5)
        XCTAssertGreaterThanOrEqual(MonotonicClock.now() - start, 0.1)
        watchdog.disarm()
    }

    func testADisarmedWatchdogNeverActs() throws {
        let fired = expectation(description: "fired")
        fired.isInverted = true
        let watchdog = try Watchdog(seconds: 0.1) { fired.fulfill() }
        watchdog.disarm()
        wait(for: [fired], timeout: 0.4)
    }

    /// The deadline interrupt of a run whose VM is already detached does nothing, and
    /// the action still runs at its own time. (The interrupt's effect on a running VM:
    /// the timeout tests of ScriptRuntime.)
    func testAnInterruptWithNoVMAttachedDoesNotHoldUpTheAction() throws {
        let order = OrderLog()
        let fired = expectation(description: "fired")
        let watchdog = try Watchdog(seconds: 0.3) { order.append("action"); fired.fulfill() }
        let running = RunningVM()
        watchdog.interrupt(running, after: 0.05)
        wait(for: [fired], timeout: 5)
        XCTAssertEqual(order.entries, ["action"])
        watchdog.disarm()
    }

    /// An infinite or absurd deadline waits (a day at a time) instead of trapping when
    /// it is turned into a `timespec`, and is disarmed like any other.
    func testAnInfiniteDeadlineNeitherFiresNorTraps() throws {
        let fired = expectation(description: "fired")
        fired.isInverted = true
        let watchdog = try Watchdog(seconds: .infinity) { fired.fulfill() }
        let huge = try Watchdog(seconds: 1e300) { fired.fulfill() }
        wait(for: [fired], timeout: 0.2)
        watchdog.disarm()
        huge.disarm()
    }

    func testAFinishedRunsWatchdogKeepsNothingAlive() throws {
        final class Payload: @unchecked Sendable {}
        weak var weakPayload: Payload?
        do {
            let payload = Payload()
            weakPayload = payload
            let watchdog = try Watchdog(seconds: 3600) { _ = payload }
            watchdog.disarm()
        }
        // The thread ends after `disarm` and drops its action with it.
        let deadline = Date().addingTimeInterval(2)
        while weakPayload != nil && Date() < deadline { usleep(1000) }
        XCTAssertNil(weakPayload)
    }
}

private final class OrderLog: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func append(_ entry: String) { lock.withLock { list.append(entry) } }
    var entries: [String] { lock.withLock { list } }
}
