import Foundation
import Telemetry
import XCTest

/// The run folder's size: files only, links not followed, bounded, cached.
final class FolderSizeTests: XCTestCase {
    final class Clock: @unchecked Sendable {
        let lock = NSLock()
        var now = Date(timeIntervalSince1970: 1_000_000)
        func read() -> Date { lock.withLock { now } }
        func advance(_ s: TimeInterval) { lock.withLock { now += s } }
    }

    func testSizesFilesSkipsLinksAndCaches() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("folder-size-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let fm = FileManager.default
        try fm.createDirectory(at: root.appendingPathComponent("run1/sub"), withIntermediateDirectories: true)
        try Data(count: 1000).write(to: root.appendingPathComponent("run1/a.csv"))
        try Data(count: 24).write(to: root.appendingPathComponent("run1/sub/b.json"))
        let outside = fm.temporaryDirectory.appendingPathComponent("folder-size-outside-\(UUID().uuidString)")
        try Data(count: 5_000_000).write(to: outside)
        defer { try? fm.removeItem(at: outside) }
        try fm.createSymbolicLink(atPath: root.appendingPathComponent("run1/link").path, withDestinationPath: outside.path)
        try fm.createSymbolicLink(atPath: root.appendingPathComponent("loop").path, withDestinationPath: root.path)

        let clock = Clock()
        let size = FolderSize(folder: root, maxAge: 60, clock: { clock.read() })
        XCTAssertEqual(size.measure(), FolderSize.Measure(bytes: 1024, files: 2, complete: true))
        try Data(count: 1).write(to: root.appendingPathComponent("run1/c"))
        clock.advance(59)
        XCTAssertEqual(size.measure().bytes, 1024, "cached for a minute")
        clock.advance(2)
        XCTAssertEqual(size.measure(), FolderSize.Measure(bytes: 1025, files: 3, complete: true))

        let bounded = FolderSize(folder: root, maxEntries: 2)
        XCTAssertFalse(bounded.measure().complete)
        let missing = FolderSize(folder: root.appendingPathComponent("nothing"))
        XCTAssertEqual(missing.measure(), FolderSize.Measure(bytes: 0, files: 0, complete: true))
    }
}

/// The scrape-time gauges: a journal that fails leaves its figures out and says so.
final class StorageGaugesTests: XCTestCase {
    struct Down: Error {}

    func testJournalFiguresAndTheirAbsence() {
        let up = StorageGauges(journal: { .init(bytes: 4096, oldestRunStart: Date(timeIntervalSince1970: 1_767_261_600)) },
                               runFolder: nil)
        XCTAssertEqual(PrometheusText.encode(up.families()).split(separator: "\n").filter { !$0.hasPrefix("#") }, [
            "hubscript_journal_size_bytes 4096",
            "hubscript_journal_oldest_run_start_time_seconds 1767261600",
            "hubscript_journal_reachable 1",
        ])
        let empty = StorageGauges(journal: { .init(bytes: 10, oldestRunStart: nil) }, runFolder: nil)
        XCTAssertEqual(PrometheusText.encode(empty.families()).split(separator: "\n").filter { !$0.hasPrefix("#") },
                       ["hubscript_journal_size_bytes 10", "hubscript_journal_reachable 1"])
        let down = StorageGauges(journal: { throw Down() }, runFolder: nil)
        let text = PrometheusText.encode(down.families())
        XCTAssertEqual(text.split(separator: "\n").filter { !$0.hasPrefix("#") }, ["hubscript_journal_reachable 0"])
        XCTAssertTrue(text.contains("# TYPE hubscript_journal_size_bytes gauge\n"), text)
    }
}
