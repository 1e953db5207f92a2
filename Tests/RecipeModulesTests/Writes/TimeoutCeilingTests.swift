import XCTest
import ScriptHost
import RunJournal

/// The journal caps a recorded timeout at the longest a run may have; the two ceilings
/// are kept in two modules (the journal has no Lua) and must agree.
final class TimeoutCeilingTests: XCTestCase {
    func testTheJournalsTimeoutCeilingIsTheRunsOwn() {
        XCTAssertEqual(Journal.timeoutCeilingSeconds, RunLimits.hostCeiling.timeoutSeconds)
    }
}
