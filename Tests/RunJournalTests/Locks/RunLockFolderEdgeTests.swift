import Foundation
import HubClient
import XCTest
@testable import RunJournal

/// Run locks, whose pid is written in place and whose folder is listed with readdir:
/// odd entries in the folder, and a lock path that is a link, must neither break the
/// sweep nor make a lock write through a link.
final class RunLockFolderEdgeTests: XCTestCase {
    var root: URL!
    var state: StateDirectory { StateDirectory(explicit: root.appendingPathComponent("state").path) }
    var locks: String { root.appendingPathComponent("state/locks").path }

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("runlock-attack-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(at: root) }

    /// A lock path that is a symbolic link (planted, or left by a tool) is never
    /// followed: the file it names is neither written nor cut to the pid.
    func testALockPathThatIsALinkDoesNotWriteThroughIt() throws {
        let victim = root.appendingPathComponent("precious.txt")
        let content = String(repeating: "keep me whole\n", count: 20)
        try content.write(to: victim, atomically: false, encoding: .utf8)
        let lockPath = try RunLock.filePath("run_link", state: state)
        XCTAssertEqual(symlink(victim.path, lockPath), 0)
        if let lock = try? RunLock.acquire("run_link", state: state) { lock.release() }
        XCTAssertEqual(try String(contentsOf: victim, encoding: .utf8), content, "the link's target was overwritten")
    }

    /// The sweep at a release does not follow links either, and entries that are not
    /// lock files (folders, names that are not UTF-8, FIFOs) neither stop it nor
    /// hang it.
    func testTheSweepSurvivesOddEntries() throws {
        _ = try state.folderPath("locks")
        XCTAssertEqual(mkdir(locks + "/folder.lock", 0o700), 0)
        XCTAssertEqual(mkfifo(locks + "/fifo.lock", 0o600), 0)
        let odd = Array(locks.utf8) + Array("/\u{FF}odd".utf8).map { $0 == 0xC3 ? 0xFF : $0 } + Array(".lock".utf8)
        let fd = odd.map { CChar(bitPattern: $0) }.withUnsafeBufferPointer { buffer -> Int32 in
            var bytes = Array(buffer); bytes.append(0)
            return open(bytes, O_CREAT | O_WRONLY, 0o600)
        }
        XCTAssertGreaterThanOrEqual(fd, 0)
        close(fd)
        let stale = locks + "/0123456789abcdef0123456789abcdef.lock"
        try Data("garbage that is no pid at all, longer than sixteen bytes\n".utf8).write(to: URL(fileURLWithPath: stale))
        let done = expectation(description: "released")
        let state = self.state
        Thread.detachNewThread {
            if let lock = try? RunLock.acquire("run_sweep", state: state) { lock.release() }
            done.fulfill()
        }
        wait(for: [done], timeout: 5)
        XCTAssertFalse(FileManager.default.fileExists(atPath: stale), "the dead run's file is swept")
        XCTAssertTrue(FileManager.default.fileExists(atPath: locks + "/folder.lock"))
    }

    /// A stale file holding garbage longer than any pid: the new holder's pid replaces
    /// it whole, and the refusal names the holder.
    func testGarbageLeftInALockFileIsReplacedByThePID() throws {
        let path = try RunLock.filePath("run_garbage", state: state)
        try Data((String(repeating: "x", count: 4000) + "\n").utf8).write(to: URL(fileURLWithPath: path))
        let held = try RunLock.acquire("run_garbage", state: state)
        defer { held.release() }
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "\(getpid())\n")
        XCTAssertThrowsError(try RunLock.acquire("run_garbage", state: state)) { error in
            XCTAssertEqual((error as? RunLock.Busy)?.pid, getpid())
        }
    }

    /// A `locks` entry that is a file, not a folder: a clear error, not a crash.
    func testALocksFileInsteadOfAFolderIsAClearError() throws {
        try FileManager.default.createDirectory(atPath: state.path, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: locks))
        XCTAssertThrowsError(try RunLock.acquire("run_x", state: state)) { error in
            XCTAssertTrue("\(error)".hasPrefix("cannot create the state folder \(locks): "), "\(error)")
        }
    }
}
