import Foundation
import HubClient
import XCTest
@testable import RunJournal

/// `RunLock`: one holder per run id, and lock files removed only by a holder (flock is
/// per open file description, so two opens in one process contend as two processes do).
final class RunLockTests: XCTestCase {
    var root: URL!
    var state: StateDirectory { StateDirectory(explicit: root.appendingPathComponent("state").path) }
    var locks: URL { root.appendingPathComponent("state/locks") }

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("runlock-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(at: root) }

    func lockFiles() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: locks.path).sorted() }

    func testASecondHolderIsRefusedAndTheFileGoesWithTheLock() throws {
        let first = try RunLock.acquire("run_a", state: state)
        XCTAssertTrue(RunLock.isHeld("run_a", state: state))
        XCTAssertThrowsError(try RunLock.acquire("run_a", state: state)) { error in
            XCTAssertEqual((error as? RunLock.Busy)?.pid, getpid())
        }
        XCTAssertEqual(try lockFiles().count, 1)
        first.release()
        XCTAssertEqual(try lockFiles(), [])
        XCTAssertFalse(RunLock.isHeld("run_a", state: state))
        let again = try RunLock.acquire("run_a", state: state)
        XCTAssertTrue(RunLock.isHeld("run_a", state: state))
        again.release()
        XCTAssertEqual(try lockFiles(), [])
    }

    /// The file of a run that died (its lock dropped by the kernel, its file left) is
    /// removed by the next release; a file another holder has is not.
    func testAReleaseSweepsTheFilesOfDeadRunsOnly() throws {
        let held = try RunLock.acquire("run_held", state: state)
        let stale = locks.appendingPathComponent("0123456789abcdef0123456789abcdef.lock")
        try Data("99999\n".utf8).write(to: stale)
        try RunLock.acquire("run_b", state: state).release()
        XCTAssertEqual(try lockFiles(), [try RunLock.file("run_held", state: state).lastPathComponent])
        XCTAssertTrue(RunLock.isHeld("run_held", state: state))
        held.release()
        XCTAssertEqual(try lockFiles(), [])
    }

    /// The holder writes its pid over whatever a dead holder left (cut only when that
    /// was longer): the refusal names the live process.
    func testTheHoldersPIDReplacesALongerStaleOne() throws {
        let file = try RunLock.file("run_pid", state: state)
        try Data("1234567890123456\n".utf8).write(to: file)
        let held = try RunLock.acquire("run_pid", state: state)
        defer { held.release() }
        XCTAssertEqual(try String(contentsOf: file, encoding: .utf8), "\(getpid())\n")
        XCTAssertThrowsError(try RunLock.acquire("run_pid", state: state)) { error in
            XCTAssertEqual((error as? RunLock.Busy)?.pid, getpid())
        }
    }

    /// Threads take and drop one run id as fast as they can while others probe it: never
    /// two holders at once, and no file is left.
    func testNeverTwoHoldersWhileFilesComeAndGo() throws {
        let state = self.state
        let inside = Counter(), taken = Counter(), overlaps = Counter()
        DispatchQueue.concurrentPerform(iterations: 6) { worker in
            for _ in 0..<200 {
                if worker == 5 { _ = RunLock.isHeld("run_race", state: state); continue }
                guard let lock = try? RunLock.acquire("run_race", state: state) else { continue }
                if inside.add(1) > 1 { overlaps.add(1) }
                taken.add(1)
                usleep(50)
                inside.add(-1)
                lock.release()
            }
        }
        XCTAssertEqual(overlaps.value, 0, "two holders of one run id at once")
        XCTAssertGreaterThan(taken.value, 100)
        XCTAssertEqual(try lockFiles(), [])
    }
}

private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var n = 0
    @discardableResult func add(_ d: Int) -> Int { lock.withLock { n += d; return n } }
    var value: Int { lock.withLock { n } }
}
