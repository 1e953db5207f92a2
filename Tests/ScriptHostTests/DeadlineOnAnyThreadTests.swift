import Foundation
import XCTest
@testable import ScriptHost

/// A recipe is stopped at its deadline whatever thread runs it: a libdispatch worker
/// (the scheduler's fires, the webhook receiver's runs) blocks every signal, and so
/// does any thread a host made with its signals blocked.
final class DeadlineOnAnyThreadTests: RecipeTestCase {
    /// Runs `source` through `start` (which runs its closure on some thread) and waits
    /// at most `seconds`.
    private func run(on start: (@escaping @Sendable () -> Void) -> Void, seconds: Double,
                     _ source: String) -> RecipeHarness.Outcome? {
        let box = OutcomeBox()
        let done = DispatchSemaphore(value: 0)
        let harness = self.harness
        start {
            box.set(harness.run(source))
            done.signal()
        }
        guard done.wait(timeout: .now() + seconds) == .success else {
            XCTFail("the run was not stopped at its deadline within \(seconds) s")
            return nil
        }
        return box.get()
    }

    private func assertStoppedAtDeadline(_ outcome: RecipeHarness.Outcome?, file: StaticString = #filePath, line: UInt = #line) {
        guard let outcome else { return }
        XCTAssertEqual(outcome.failure?.kind, .limit(.timeout), outcome.message, file: file, line: line)
        XCTAssertEqual(outcome.message, LimitMessages.timeout("0.2 s"), file: file, line: line)
        // Stopped by the interrupt at the deadline, not by the watchdog's last resort
        // (2 s later), which would end a whole scheduler.
        XCTAssertLessThan(outcome.report.durationSeconds, 1.5, file: file, line: line)
    }

    func testALoopOnALibdispatchWorkerStopsAtItsDeadline() {
        harness.limits.timeoutSeconds = 0.2
        for source in ["while true do end", "local t = {} while true do t[1] = (t[1] or 0) + 1 end",
                       "local co = coroutine.wrap(function() while true do end end) co()"] {
            assertStoppedAtDeadline(run(on: { DispatchQueue.global().async(execute: $0) }, seconds: 10, source))
            assertStoppedAtDeadline(run(on: { DispatchQueue(label: "serial").async(execute: $0) }, seconds: 10, source))
        }
    }

    func testALoopOnAThreadThatBlocksEverySignalStopsAtItsDeadline() {
        harness.limits.timeoutSeconds = 0.2
        let outcome = run(on: { body in
            Thread.detachNewThread {
                var all = sigset_t()
                sigfillset(&all)
                pthread_sigmask(SIG_BLOCK, &all, nil)
                body()
            }
        }, seconds: 10, "while true do end")
        assertStoppedAtDeadline(outcome)
    }

    /// Many runs at once, each on a worker, each stopped at its own deadline.
    func testConcurrentLoopsOnWorkersEachStop() {
        harness.limits.timeoutSeconds = 0.2
        let group = DispatchGroup()
        let outcomes = OutcomeList()
        let harness = self.harness
        for _ in 0..<6 {
            DispatchQueue.global().async(group: group) { outcomes.append(harness.run("while true do end")) }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 20), .success, "the runs were not all stopped")
        XCTAssertEqual(outcomes.all.map { $0.failure?.kind }, Array(repeating: .limit(.timeout), count: 6))
    }
}

private final class OutcomeList: @unchecked Sendable {
    private let lock = NSLock()
    private var outcomes: [RecipeHarness.Outcome] = []
    func append(_ o: RecipeHarness.Outcome) { lock.withLock { outcomes.append(o) } }
    var all: [RecipeHarness.Outcome] { lock.withLock { outcomes } }
}
