import Foundation
import Scheduler
import XCTest
import Configuration
import Automation

/// Thousands of jobs due at once run at most `concurrency` fires at a time, on that
/// many threads, and every one of them runs.
final class ManyDueJobsTests: XCTestCase {
    /// An executor that counts fires running at once and the process's threads.
    final class CountingExecutor: FireExecutor, @unchecked Sendable {
        private let lock = NSLock()
        private(set) var running = 0
        private(set) var most = 0
        private(set) var mostThreads = 0
        private(set) var ran = 0

        func execute(_ fire: FireLaunch) -> FireResult {
            lock.withLock {
                running += 1
                ran += 1
                most = max(most, running)
            }
            let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0
            usleep(200)
            lock.withLock {
                mostThreads = max(mostThreads, threads)
                running -= 1
            }
            return .succeeded
        }
    }

    func testThreeThousandDueJobsRunAtMostConcurrencyAtOnce() throws {
        let fixture = try JobsFixture(now: "2026-01-01T10:00:05Z")
        let jobs = try (0..<3_000).map { try fixture.job("job\($0)", "* * * * *") }
        let executor = CountingExecutor()
        let journal = try fixture.journal
        let scheduler = JobScheduler(jobs: JobsConfig(source: nil, jobs: jobs), journal: journal, state: fixture.state,
                                     executor: executor, notifier: fixture.notifier, clock: { fixture.clock.now })
        scheduler.concurrency = 4
        let before = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0
        try scheduler.runDue(now: fixture.clock.now)
        XCTAssertEqual(executor.ran, 3_000)
        XCTAssertLessThanOrEqual(executor.most, 4)
        // The pool's 4 threads (and what the test process already had, give or take a
        // few of libdispatch's): never one a job.
        XCTAssertLessThan(executor.mostThreads, before + 4 + 16, "threads before \(before), most while firing \(executor.mostThreads)")
        XCTAssertEqual(try journal.fires(job: nil, limit: 10_000).filter { $0.status == .succeeded }.count, 3_000)
    }
}
