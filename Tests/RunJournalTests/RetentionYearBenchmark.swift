import Foundation
import XCTest
import SystemText
@testable import RunJournal

/// A simulated year of one job for scripts/bench-retention (skipped unless
/// HUBSCRIPT_BENCH_RETENTION_DAYS is set): a fire every 5 minutes, each a run with 2
/// writes (entitlement-sized params and answers) and its fire record, inserted through
/// the Journal API on a fake clock; a prune with `HUBSCRIPT_BENCH_RETENTION_KEEP_DAYS`
/// (default 90) days of retention after each simulated day, as `jobs serve` does.
/// Prints the journal's size (file + write-ahead log) every 30 days and at the end.
final class RetentionYearBenchmark: XCTestCase {
    func testAYearOfAFiveMinuteJobStaysBounded() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let days = environment["HUBSCRIPT_BENCH_RETENTION_DAYS"].flatMap(Int.init) else {
            throw XCTSkip("run by scripts/bench-retention (HUBSCRIPT_BENCH_RETENTION_DAYS=N)")
        }
        let keepDays = environment["HUBSCRIPT_BENCH_RETENTION_KEEP_DAYS"].flatMap(Double.init) ?? 90
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bench-retention-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent(Journal.fileName).path
        let start = Date(timeIntervalSince1970: 1_767_225_600)   // 2026-01-01T00:00:00Z
        let clock = TestClock(start)
        let journal = try Journal(path: path, clock: clock.read)
        let params = #"{"group":"grp_01HZX3K9Q2M7TEAMS","reason":"nightly sync of team membership from the HR feed","users":["usr_01HZX3K9Q2M7AAAA","usr_01HZX3K9Q2M7BBBB"]}"#
        let answer = #"{"id":"ent_01HZX3K9Q2M7ENTITLEMENT","user_id":"usr_01HZX3K9Q2M7AAAA","group_id":"grp_01HZX3K9Q2M7TEAMS","role":"member","granted_at":"2026-01-01T00:05:00Z","granted_by":"key_01HZX3K9Q2M7SYNC","status":"active","source":"api"}"#
        let keep = RetentionKeep(locks: TestLocks(), unfinishedBefore: nil)
        var peak: Int64 = 0
        var pruned = PruneReport()
        let wall = Date()
        print(String(format: "bench-retention: %6@ %9@ %8@ %10@", "day", "runs", "fires", "journal"))
        for day in 0..<days {
            for slot in 0..<288 {
                let at = start.addingTimeInterval(Double(day) * 86_400 + Double(slot) * 300)
                clock.set(at)
                let id = "sync@" + String(Int(at.timeIntervalSince1970))
                var run = RunStart(id: id, recipePath: "/srv/hubscript/recipes/sync-teams.lua", recipeSHA256: String(repeating: "ab", count: 32),
                                   paramsJSON: params, profile: "production", mode: .run)
                run.outputFolder = "/var/lib/hubscript/runs/" + id
                try journal.startNewRun(run, masking: SecretRedactor())
                for n in 1...2 {
                    let key = "wk1-\(id)-\(n)-0123456789abcdef0123456789abcdef"
                    _ = try journal.beginWrite(runID: id, sequence: n, key: key, method: "POST",
                                               path: "/groups/grp_01HZX3K9Q2M7TEAMS/members", bodySHA256: String(repeating: "cd", count: 32), runReads: n)
                    try journal.recordDone(runID: id, key: key, httpStatus: 201, responseJSON: answer, deferred: true, masking: SecretRedactor())
                }
                try journal.finishRun(id: id, status: .succeeded, counts: RunCounts(reads: 2, writes: 2), exitCode: 0)
                try journal.recordFire(NewFire(job: "sync", scheduledAt: at, runID: id, status: .succeeded))
            }
            clock.set(start.addingTimeInterval(Double(day + 1) * 86_400))
            let report = try journal.prune(PruneRule(before: clock.read().addingTimeInterval(-keepDays * 86_400)), keep: keep, exportsRoot: nil)
            pruned.runs += report.runs
            pruned.writes += report.writes
            pruned.fires += report.fires
            let size = try journal.storageBytes()
            peak = max(peak, size)
            if (day + 1) % 30 == 0 || day + 1 == days {
                let runs = try journal.reading { db in try db.first("SELECT count(*) FROM runs") { $0.int(0) } ?? 0 }
                let fires = try journal.reading { db in try db.first("SELECT count(*) FROM fires") { $0.int(0) } ?? 0 }
                print(String(format: "bench-retention: %6d %9d %8d %7.1f MB", day + 1, runs, fires, Double(size) / 1_000_000))
            }
        }
        print(String(format: "bench-retention: %d days, %d fires, %g-day retention: %d runs and %d writes pruned; journal at the end %.1f MB, at most %.1f MB (%.0f s)",
                     days, days * 288, keepDays, pruned.runs, pruned.writes, Double(try journal.storageBytes()) / 1_000_000,
                     Double(peak) / 1_000_000, Date().timeIntervalSince(wall)))
    }
}
