import Foundation
import XCTest
@testable import Automation

/// The scheduler's fires run on a bounded pool: thousands of due jobs start `limit`
/// threads, each job's fires keep their order, and a thread that cannot be started
/// never leaves a fire waiting for it.
final class FirePoolTests: XCTestCase {
    /// Counts fires running at once.
    final class Gauge: @unchecked Sendable {
        private let lock = NSLock()
        private(set) var running = 0
        private(set) var most = 0
        private(set) var order: [String: [Int]] = [:]
        func enter(_ job: String, _ n: Int) {
            lock.withLock {
                running += 1
                most = max(most, running)
                order[job, default: []].append(n)
            }
        }
        func leave() { lock.withLock { running -= 1 } }
        var snapshot: (most: Int, order: [String: [Int]]) { lock.withLock { (most, order) } }
    }

    func testThousandsOfJobsRunOnAtMostLimitThreadsEachInOrder() throws {
        let pool = FirePool(limit: 4, waiterHelps: false)
        let gauge = Gauge()
        for job in 0..<1_000 {
            for n in 0..<3 {
                try pool.enqueue(job: "job\(job)", runID: "job\(job)@\(n)") {
                    gauge.enter("job\(job)", n)
                    usleep(50)
                    gauge.leave()
                }
            }
        }
        XCTAssertLessThanOrEqual(pool.threadCount, 4)
        pool.waitForAll()
        let seen = gauge.snapshot
        XCTAssertLessThanOrEqual(seen.most, 4)
        XCTAssertEqual(seen.order.count, 1_000)
        XCTAssertTrue(seen.order.values.allSatisfy { $0 == [0, 1, 2] }, "a job's fires ran out of order")
        XCTAssertFalse(pool.isBusy("job7"))
        XCTAssertFalse(pool.isDispatched("job7@2"))
        pool.close()
    }

    /// The waiter helps: with the limit's threads, and with none at all.
    func testTheWaiterRunsFiresWhenNoThreadCanStart() throws {
        let pool = FirePool(limit: 8, waiterHelps: true, startThread: { _ in EAGAIN })
        let gauge = Gauge()
        for job in 0..<50 {
            try pool.enqueue(job: "job\(job)", runID: "job\(job)@0") { gauge.enter("job\(job)", 0); gauge.leave() }
        }
        XCTAssertEqual(pool.threadCount, 0)
        pool.waitForAll()
        XCTAssertEqual(gauge.snapshot.order.count, 50)
    }

    /// Without a helping waiter, a fire no thread can run is refused, not kept waiting.
    func testAFireNoThreadCanRunIsRefusedAndNotKept() throws {
        let pool = FirePool(limit: 8, waiterHelps: false, startThread: { _ in EAGAIN })
        XCTAssertThrowsError(try pool.enqueue(job: "a", runID: "a@0") { XCTFail("ran") }) { error in
            XCTAssertEqual("\(error)", """
                cannot start a thread for the fire: Resource temporarily unavailable (too many processes or threads \
                for this user: check ulimit -u or the service's TasksMax, or lower jobs --concurrency); it stays due \
                and is tried again
                """)
        }
        XCTAssertFalse(pool.isBusy("a"))
        XCTAssertFalse(pool.isDispatched("a@0"))
        pool.waitForAll()   // nothing outstanding: returns at once
    }

    /// Some threads start, then no more can: the fires run on those that did.
    func testFiresRunOnTheThreadsThatStarted() throws {
        let started = Counter()
        let pool = FirePool(limit: 8, waiterHelps: false, startThread: { body in
            guard started.next() <= 2 else { return EAGAIN }
            return FirePool.startPOSIXThread(body)
        })
        let gauge = Gauge()
        for job in 0..<40 {
            try pool.enqueue(job: "job\(job)", runID: "job\(job)@0") { gauge.enter("job\(job)", 0); usleep(100); gauge.leave() }
        }
        pool.waitForAll()
        XCTAssertEqual(gauge.snapshot.order.count, 40)
        XCTAssertLessThanOrEqual(gauge.snapshot.most, 2)
        pool.close()
    }

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var n = 0
        func next() -> Int { lock.withLock { n += 1; return n } }
    }
}
