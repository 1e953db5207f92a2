import Foundation
import XCTest
import SystemText
import JournalTestSupport
import TestSupport
import Telemetry
@testable import RunJournal

/// What `/readyz` and `/metrics` read from the journal, on both backends: whether it
/// answers, its size, its oldest run.
final class JournalFootprintTests: XCTestCase {
    func testSizeGrowsWithItsRunsAndTheOldestRunIsReported() throws {
        try eachJournalBackend { backend in
            let location = try backend.newLocation()
            let first = Fixture.start
            let journal = try Journal(location, clock: { first })
            try journal.checkReachable()
            XCTAssertNil(try journal.oldestRunStart())
            let empty = try journal.storageBytes()
            XCTAssertGreaterThan(empty, 0)
            try journal.startRun(Fixture.runStart("run_a"), masking: SecretRedactor())
            let later = try Journal(location, clock: { first.addingTimeInterval(3600) })
            try later.startRun(Fixture.runStart("run_b"), masking: SecretRedactor())
            for i in 0..<300 {
                try later.recordPending(runID: "run_b", sequence: i + 1, key: "k\(i)", method: "POST",
                                        path: "/users/usr_\(i)/suspend", bodySHA256: String(repeating: "d", count: 64))
                try later.recordDone(runID: "run_b", key: "k\(i)", httpStatus: 200,
                                     responseJSON: #"{"status":"suspended","padding":""# + String(repeating: "x", count: 200) + #""}"#, masking: SecretRedactor())
            }
            XCTAssertEqual(try later.oldestRunStart(), first)
            XCTAssertGreaterThan(try later.storageBytes(), empty)
            if case .sqlite(let path) = location {
                let file = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
                let wal = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
                XCTAssertGreaterThanOrEqual(try later.storageBytes(), Int64(file + wal))
            }
        }
    }

    func testADeletedJournalFileIsNotReachable() throws {
        let location = try JournalBackend.sqlite.newLocation()
        guard case .sqlite(let path) = location else { return XCTFail("not a file") }
        let journal = try Journal(location)
        try journal.checkReachable()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        let message = "the journal file \(path) is gone (deleted or moved): restart the command to make a new one, or put it back"
        XCTAssertThrowsError(try journal.checkReachable()) { error in
            XCTAssertEqual((error as? JournalError)?.code, .sqlite)
            XCTAssertEqual((error as? JournalError)?.message, message)
        }
        XCTAssertThrowsError(try journal.storageBytes())
    }

    func testJournalHealthReportsReadinessAndGaugesUntilTheFileIsGone() throws {
        let location = try JournalBackend.sqlite.newLocation()
        guard case .sqlite(let path) = location else { return XCTFail("not a file") }
        let journal = try Journal(location, clock: { Fixture.start })
        try journal.startRun(Fixture.runStart("run_a"), masking: SecretRedactor())
        let runs = URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("runs")
        try FileManager.default.createDirectory(at: runs.appendingPathComponent("run_a"), withIntermediateDirectories: true)
        try Data(count: 300).write(to: runs.appendingPathComponent("run_a/export.csv"))
        let health = JournalHealth(journal: journal, runFolder: runs)
        let registry = MetricsRegistry()
        health.install(on: registry)
        XCTAssertNil(health.notReadyReason())
        XCTAssertNil(health.readinessCheck.check())
        var samples = registry.exposition().split(separator: "\n").filter { !$0.hasPrefix("#") }
        XCTAssertTrue(samples[0].hasPrefix("hubscript_journal_size_bytes "), "\(samples)")
        XCTAssertEqual(Array(samples[1...]), [
            "hubscript_journal_oldest_run_start_time_seconds \(PrometheusText.number(Fixture.start.timeIntervalSince1970))",
            "hubscript_journal_reachable 1",
            "hubscript_run_folder_size_bytes 300",
            "hubscript_run_folder_files 1",
            "hubscript_run_folder_walk_complete 1",
        ])
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        XCTAssertEqual(health.notReadyReason(), "the journal is not reachable: the journal file \(path) is gone (deleted or moved): restart the command to make a new one, or put it back")
        samples = registry.exposition().split(separator: "\n").filter { !$0.hasPrefix("#") }
        XCTAssertEqual(samples, ["hubscript_journal_reachable 0", "hubscript_run_folder_size_bytes 300",
                                 "hubscript_run_folder_files 1", "hubscript_run_folder_walk_complete 1"])
    }

    func testAnInMemoryJournalTakesNoSpace() throws {
        let journal = try Journal.inMemory()
        try journal.checkReachable()
        XCTAssertEqual(try journal.storageBytes(), 0)
    }
}
