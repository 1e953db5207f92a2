import Foundation
import SQLiteKit
import XCTest
@testable import RunJournal

/// What opening the journal costs, with and without its integrity check, for
/// scripts/bench-journal (skipped unless HUBSCRIPT_BENCH_JOURNAL_WRITES is set).
/// The journal holds that many done writes (runs of 100, with entitlement-sized
/// responses), written in one transaction; each figure is the median of RUNS opens
/// (and closes) of the file, warm in the page cache.
final class JournalOpenBenchmark: XCTestCase {
    func testOpenTimeWithAndWithoutTheIntegrityCheck() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let writes = environment["HUBSCRIPT_BENCH_JOURNAL_WRITES"].flatMap(Int.init) else {
            throw XCTSkip("run by scripts/bench-journal (HUBSCRIPT_BENCH_JOURNAL_WRITES=N)")
        }
        let runs = environment["HUBSCRIPT_BENCH_JOURNAL_RUNS"].flatMap(Int.init) ?? 5
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bench-journal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent(Journal.fileName).path
        _ = try Journal.openChecked(path: path)
        try Self.fill(path, writes: writes)
        let megabytes = Double((try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0) / 1_048_576

        func median(setUp: () throws -> Void = {}, _ body: () throws -> Void) rethrows -> Double {
            var times: [Double] = []
            for _ in 0..<runs {
                try setUp()
                let start = DispatchTime.now().uptimeNanoseconds
                try body()
                times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
            }
            return times.sorted()[times.count / 2]
        }
        let plain = try median { _ = try Journal.openChecked(path: path, check: .skip) }
        let checked = try median { _ = try Journal.openChecked(path: path, check: .always) }
        // A new run: the journal was closed cleanly (by the opens above), so not checked.
        let newRun = try median { _ = try Journal.openChecked(path: path, check: .unlessClosedCleanly) }
        // A new run after a process died: its log is left, so checked.
        let died = try median(setUp: { try Self.leaveTheLog(path) }) {
            _ = try Journal.openChecked(path: path, check: .unlessClosedCleanly)
        }
        print(String(format: "bench-journal: %d writes (%.1f MiB), median of %d: open %.1f ms | open + quick_check %.1f ms "
                     + "| a new run's open: %.1f ms after a clean close, %.1f ms after a process died",
                     writes, megabytes, runs, plain, checked, newRun, died))
    }

    /// Makes the journal at `path` look as a killed process leaves it: a log with frames
    /// and no valid marker (the marker is removed; the log is written by a second
    /// connection that is then leaked, never closed, as a `kill -9` would).
    static func leaveTheLog(_ path: String) throws {
        unlink(path + "-closed")
        let leaked = try SQLiteDatabase(path: path)
        try leaked.exec("PRAGMA journal_mode=WAL; UPDATE runs SET reads = reads + 1 WHERE id = (SELECT min(id) FROM runs)")
        _ = Unmanaged.passRetained(leaked)
    }

    /// `writes` done writes in runs of 100, in one transaction.
    static func fill(_ path: String, writes: Int) throws {
        let db = try SQLiteDatabase(path: path)
        let response = #"{"application_id":"app_hub","created_at":"2026-11-30T14:22:33Z","granted_by":"key_jobs","id":"ent_%08d","source":"admin_grant","status":"active","updated_at":"2026-11-30T14:22:33Z","user_id":"usr_%08d"}"#
        let now = Int(Date().timeIntervalSince1970 * 1000)
        try db.transaction {
            for run in 0..<((writes + 99) / 100) {
                let id = String(format: "run_bench_%06d", run)
                _ = try db.run("""
                    INSERT INTO runs (id, recipe_path, recipe_sha256, params, profile, mode, status, started_at, finished_at,
                                      reads, writes, output_folder)
                    VALUES (?1, '/recipes/bulk-grant.lua', ?2, '{"app":"app_hub"}', 'sandbox', 'run', 'succeeded', ?3, ?3, 2, 100, '/tmp/out')
                    """, [.text(id), .text(String(repeating: "ab", count: 32)), .int(now)])
                for seq in 1...min(100, writes - run * 100) {
                    let n = run * 100 + seq
                    _ = try db.run("""
                        INSERT INTO writes (run_id, seq, key, method, path, body_sha256, state, http_status, response,
                                            attempts, created_at, updated_at)
                        VALUES (?1, ?2, ?3, 'POST', ?4, ?5, 'done', 201, ?6, 1, ?7, ?7)
                        """, [.text(id), .int(seq), .text(String(format: "hs1-%060d", n)), .text(String(format: "/users/usr_%08d/entitlements", n)),
                              .text(String(format: "%064d", n)), .text(String(format: response, n, n)), .int(now)])
                }
            }
        }
    }
}
