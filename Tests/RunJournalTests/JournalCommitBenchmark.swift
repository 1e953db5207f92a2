import Foundation
import SystemText
import XCTest
import JournalTestSupport
@testable import RunJournal

/// What counting commits (`Journal+History`) costs a write: the same live-run writes
/// (`beginWrite`, then the outcome staged and committed with the next) on a journal
/// that keeps the count (opened by `openChecked`) and on one that does not. Run by
/// scripts/bench-journal (skipped unless HUBSCRIPT_BENCH_JOURNAL_COMMITS is set); the
/// median of RUNS rounds of that many writes each.
final class JournalCommitBenchmark: XCTestCase {
    func testWritesWithAndWithoutTheCountOfCommits() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let writes = environment["HUBSCRIPT_BENCH_JOURNAL_COMMITS"].flatMap(Int.init) else {
            throw XCTSkip("run by scripts/bench-journal (HUBSCRIPT_BENCH_JOURNAL_COMMITS=N)")
        }
        let runs = environment["HUBSCRIPT_BENCH_JOURNAL_RUNS"].flatMap(Int.init) ?? 5
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bench-commits-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }

        func round(counted: Bool, _ n: Int) throws -> Double {
            let path = dir.appendingPathComponent("j-\(counted)-\(n).sqlite").path
            _ = try Journal.openChecked(path: path)   // made whole, as a run makes it
            let journal = counted ? try Journal.openChecked(path: path) : try Journal(path: path)
            XCTAssertEqual(journal.commitLog != nil, counted)
            let run = try journal.startRun(Fixture.runStart("run_bench"), masking: SecretRedactor())
            let start = DispatchTime.now().uptimeNanoseconds
            for k in 0..<writes {
                let key = "key-\(k)"
                _ = try journal.beginWrite(runID: run.id, sequence: k + 1, key: key, method: "POST",
                                           path: "/users/usr_\(k)/suspend", bodySHA256: String(repeating: "ab", count: 32))
                try journal.recordDone(runID: run.id, key: key, httpStatus: 200, responseJSON: #"{"id":"usr_\#(k)"}"#, deferred: true, masking: SecretRedactor())
            }
            try journal.flush()
            return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e3 / Double(writes)
        }
        var plain: [Double] = [], counted: [Double] = []
        for n in 0..<runs {
            plain.append(try round(counted: false, n))
            counted.append(try round(counted: true, n))
        }
        let p = plain.sorted()[runs / 2], c = counted.sorted()[runs / 2]
        print(String(format: "bench-journal: %d writes a round, median of %d: %.1f µs a write without the count of commits, %.1f µs with it (+%.1f µs, %+.0f %%)",
                     writes, runs, p, c, c - p, (c / p - 1) * 100))
    }
}

/// The pieces of that cost, each alone (same switch): the side record's write, and the
/// two reads of the last write row.
final class JournalCommitPiecesBenchmark: XCTestCase {
    func testThePiecesOfTheCount() throws {
        guard let n = ProcessInfo.processInfo.environment["HUBSCRIPT_BENCH_JOURNAL_COMMITS"].flatMap(Int.init) else {
            throw XCTSkip("run by scripts/bench-journal (HUBSCRIPT_BENCH_JOURNAL_COMMITS=N)")
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bench-pieces-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("j.sqlite").path
        let journal = try Journal.openChecked(path: path)
        let log = try XCTUnwrap(journal.commitLog)
        var start = DispatchTime.now().uptimeNanoseconds
        for k in 0..<n { log.record(1_000 + k) }
        let record = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e3 / Double(n)
        start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<n { _ = try journal.locked { try Journal.lastWriteRow($0) } }
        let read = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e3 / Double(n)
        print(String(format: "bench-journal: the side record's write %.1f µs, a read of the last write row %.1f µs (%d each)", record, read, n))
    }
}
