import Foundation
import SQLiteKit

/// Retention: removing old runs with everything that belongs to them.
///
/// Contracts:
/// - A run goes with its writes, recorded reads, fire records and trigger events, and
///   its export folder when that is `exportsRoot/<run id>` (a folder the run was told to
///   use elsewhere is the user's and stays). What `RetentionKeep` keeps never goes.
/// - Bounded transactions: a batch of at most `batchRows` runs is first recorded in
///   `pruning`; its writes and reads are then deleted `batchRows` rows a transaction;
///   one more transaction deletes the runs' rows, fires and trigger events and marks the
///   batch's rows gone; only then are the export folders removed, and the batch's
///   `pruning` rows last. So the write lock is never held for more than about
///   `batchRows` rows, and a prune killed at any point leaves every run either whole,
///   recorded in `pruning` (finished first by the next prune), or gone.
/// - Each job keeps its latest scheduled fire record, which the scheduler reads to
///   know where its schedule stands.
/// - A completed (not dry) prune records its time (`lastPruneAt`), then gives the
///   space back on SQLite: `PRAGMA incremental_vacuum` in steps, on a journal made
///   with `auto_vacuum = INCREMENTAL` (every journal this version creates). On an
///   older file the freed pages are reused by later runs instead (the file stops
///   growing but does not shrink). PostgreSQL's autovacuum makes the space reusable.
extension Journal {
    /// Removes the runs `rule` selects except those `keep` keeps (see the contracts
    /// above); with `dryRun`, removes nothing and reports what would go.
    public func prune(_ rule: PruneRule, keep: RetentionKeep, exportsRoot: String?, batchRows: Int = 1000,
                      dryRun: Bool = false) throws -> PruneReport {
        let batch = max(1, batchRows)
        var report = PruneReport()
        let keptFires = try notLatestScheduledFire()
        if !dryRun { try finishPruning(&report, exportsRoot: exportsRoot, batch: batch, keptFires: keptFires) }
        var after: (Int, String)?
        while true {
            let page = try pruneCandidates(rule, after: after, limit: batch)
            guard !page.isEmpty else { break }
            var chosen: [RunRecord] = []
            var held: [any HeldRunLock] = []
            defer { held.forEach { $0.release() } }
            for run in page {
                // On PostgreSQL each lock is a connection: a batch holds a few at most,
                // and the rest of the page is read again for the next batch.
                if held.count == Journal.locksPerBatch { break }
                after = (Journal.ms(run.startedAt).asInt, run.id)
                let status: PruneStatus
                if run.status == .running {
                    guard !keep.locks.isHeld(run.id) else {
                        report.kept[.running, default: 0] += 1
                        continue
                    }
                    status = .interrupted
                } else {
                    status = PruneStatus(rawValue: run.status.rawValue) ?? .failed
                }
                if let statuses = rule.statuses, !statuses.contains(status) { continue }
                if let reason = try keep.reasonToKeep(run, status: status) {
                    report.kept[reason, default: 0] += 1
                    continue
                }
                // A run that could be resumed is locked while it goes, so no resume starts
                // on a half-deleted run (a succeeded one is never rerun: a resume says so).
                if status.isUnfinished && !dryRun {
                    do { held.append(try keep.locks.acquire(run.id)) } catch is RunLock.Busy {
                        report.kept[.running, default: 0] += 1
                        continue
                    }
                }
                chosen.append(run)
            }
            if chosen.isEmpty { continue }
            if dryRun { try countWouldGo(chosen, into: &report, exportsRoot: exportsRoot, keptFires: keptFires) } else {
                try beginPruning(chosen)
                try deleteBegun(&report, exportsRoot: exportsRoot, batch: batch, keptFires: keptFires)
            }
        }
        if rule.statuses == nil && rule.recipePath == nil {
            try pruneOrphanRecords(rule, into: &report, batch: batch, dryRun: dryRun, keptFires: keptFires)
        }
        if !dryRun {
            try setMeta("last_prune_at", String(nowMs()))
            report.journalBytesFreed = try giveSpaceBack()
        }
        return report
    }

    /// The most run locks one batch of a prune holds (`RetentionKeep` locks unfinished runs while they go).
    static let locksPerBatch = 16

    /// When the last completed prune ended (nil: never).
    public func lastPruneAt() throws -> Date? {
        try meta("last_prune_at").flatMap(Int.init).flatMap(Journal.date)
    }

    // MARK: - Steps

    /// Runs selected by `rule`'s age, recipe and job, oldest first, after `after`.
    private func pruneCandidates(_ rule: PruneRule, after: (Int, String)?, limit: Int) throws -> [RunRecord] {
        try reading { db in
            var condition = """
                started_at < ?1 AND coalesce(finished_at, started_at) < ?1
                AND id NOT IN (SELECT run_id FROM pruning)
                """
            var values: [SQLValue] = [.int(Journal.ms(rule.before).asInt)]
            if let after {
                values += [.int(after.0), .text(after.1)]
                condition += " AND (started_at > ?\(values.count - 1) OR (started_at = ?\(values.count - 1) AND id > ?\(values.count)))"
            }
            if let recipe = rule.recipePath {
                values.append(.text(recipe))
                condition += " AND recipe_path = ?\(values.count)"
            }
            if let job = rule.job {
                values.append(.text(job))
                condition += " AND id IN (SELECT run_id FROM fires WHERE job = ?\(values.count))"
            }
            return try Journal.selectRuns(db, where: condition, values, suffix: "ORDER BY started_at, id LIMIT \(limit)")
        }
    }

    /// Records `runs` in `pruning`, in one transaction.
    private func beginPruning(_ runs: [RunRecord]) throws {
        try transaction { db in
            for run in runs {
                try db.run("INSERT INTO pruning (run_id, output_folder) VALUES (?1, ?2) ON CONFLICT (run_id) DO NOTHING",
                           [.text(run.id), .opt(run.outputFolder)])
            }
        }
    }

    /// Finishes what a prune killed mid-way began.
    private func finishPruning(_ report: inout PruneReport, exportsRoot: String?, batch: Int, keptFires: String) throws {
        let begun = try reading { db in try db.first("SELECT count(*) FROM pruning WHERE rows_gone = 0") { $0.int(0) } ?? 0 }
        report.finishedFromEarlier = begun
        try deleteBegun(&report, exportsRoot: exportsRoot, batch: batch, keptFires: keptFires)
    }

    /// Deletes every run recorded in `pruning`: rows in bounded batches, then folders.
    private func deleteBegun(_ report: inout PruneReport, exportsRoot: String?, batch: Int, keptFires: String) throws {
        for table in Journal.runOwnedTables {
            while true {
                let gone = try transaction { db in
                    try db.run("""
                        DELETE FROM \(table.name) WHERE (run_id, \(table.key)) IN (
                            SELECT t.run_id, t.\(table.key) FROM \(table.name) t JOIN pruning p ON p.run_id = t.run_id
                            WHERE p.rows_gone = 0 LIMIT \(batch))
                        """, [])
                }
                if table.name == "writes" { report.writes += gone }
                if table.name == "reads" { report.reads += gone }
                if gone == 0 { break }
            }
        }
        try transaction { db in
            let begun = "SELECT run_id FROM pruning WHERE rows_gone = 0"
            report.fires += try db.run("""
                DELETE FROM fires WHERE run_id IN (\(begun)) AND status NOT IN ('queued', 'fired')
                AND \(keptFires)
                """, [])
            report.triggerEvents += try db.run("DELETE FROM trigger_events WHERE run_id IN (\(begun))", [])
            report.runs += try db.run("DELETE FROM runs WHERE id IN (\(begun))", [])
            try db.run("UPDATE pruning SET rows_gone = 1 WHERE rows_gone = 0", [])
        }
        var folders: [(String, String?)] = []
        try reading { db in
            try db.query("SELECT run_id, output_folder FROM pruning WHERE rows_gone = 1") { folders.append(($0.text(0), $0.textOrNil(1))) }
        }
        for (id, folder) in folders {
            if let exportsRoot, let folder, ExportFolder.isOwn(folder, runID: id, root: exportsRoot) {
                let bytes = ExportFolder.bytes(folder)
                if ExportFolder.remove(folder) {
                    report.exportFolders += 1
                    report.exportBytes += bytes
                }
            }
        }
        try transaction { db in _ = try db.run("DELETE FROM pruning WHERE rows_gone = 1", []) }
    }

    /// Counts what deleting `runs` would remove.
    private func countWouldGo(_ runs: [RunRecord], into report: inout PruneReport, exportsRoot: String?, keptFires: String) throws {
        try reading { db in
            for run in runs {
                let id: [SQLValue] = [.text(run.id)]
                report.writes += try db.first("SELECT count(*) FROM writes WHERE run_id = ?1", id) { $0.int(0) } ?? 0
                report.reads += try db.first("SELECT count(*) FROM reads WHERE run_id = ?1", id) { $0.int(0) } ?? 0
                report.fires += try db.first("""
                    SELECT count(*) FROM fires WHERE run_id = ?1 AND status NOT IN ('queued', 'fired')
                    AND \(keptFires)
                    """, id) { $0.int(0) } ?? 0
                report.triggerEvents += try db.first("SELECT count(*) FROM trigger_events WHERE run_id = ?1", id) { $0.int(0) } ?? 0
            }
        }
        report.runs += runs.count
        for run in runs {
            if let exportsRoot, let folder = run.outputFolder, ExportFolder.isOwn(folder, runID: run.id, root: exportsRoot),
               FileManager.default.fileExists(atPath: folder) {
                report.exportFolders += 1
                report.exportBytes += ExportFolder.bytes(folder)
            }
        }
    }

    /// Fire records with no run (skipped, missed) and trigger events whose run never
    /// started, from before the rule's moment; each job's latest scheduled fire stays.
    private func pruneOrphanRecords(_ rule: PruneRule, into report: inout PruneReport, batch: Int, dryRun: Bool,
                                    keptFires: String) throws {
        let before = Journal.ms(rule.before).asInt
        var fireCondition = """
            coalesce(missed_through, scheduled_at) < ?1 AND status IN ('skipped', 'missed', 'failed', 'succeeded')
            AND run_id NOT IN (SELECT id FROM runs) AND run_id NOT IN (SELECT run_id FROM pruning)
            """
        var values: [SQLValue] = [.int(before)]
        if let job = rule.job {
            values.append(.text(job))
            fireCondition += " AND job = ?2"
        }
        let eventCondition = """
            updated_at < ?1 AND status IN ('succeeded', 'failed') AND run_id NOT IN (SELECT id FROM runs)
            """
        if dryRun {
            try reading { db in
                report.fires += try db.first("SELECT count(*) FROM fires WHERE \(fireCondition) AND \(keptFires)",
                                             values) { $0.int(0) } ?? 0
                if rule.job == nil {
                    report.triggerEvents += try db.first("SELECT count(*) FROM trigger_events WHERE \(eventCondition)", [.int(before)]) { $0.int(0) } ?? 0
                }
            }
            return
        }
        while true {
            let gone = try transaction { db in
                try db.run("""
                    DELETE FROM fires WHERE id IN (SELECT id FROM fires WHERE \(fireCondition)
                    AND \(keptFires) LIMIT \(batch))
                    """, values)
            }
            report.fires += gone
            if gone == 0 { break }
        }
        guard rule.job == nil else { return }
        while true {
            let gone = try transaction { db in
                try db.run("""
                    DELETE FROM trigger_events WHERE (event_id, trigger) IN (
                        SELECT event_id, trigger FROM trigger_events WHERE \(eventCondition) LIMIT \(batch))
                    """, [.int(before)])
            }
            report.triggerEvents += gone
            if gone == 0 { break }
        }
    }

    /// The tables whose rows belong to one run (`run_id`, and the rest of their key):
    /// deleted before the run's row. A new table that refers to runs is added here.
    static let runOwnedTables: [(name: String, key: String)] = [("writes", "key"), ("reads", "key"), ("run_output", "seq")]

    /// A condition true for every fire row but each job's latest settled scheduled fire
    /// (what the scheduler reads, `settleFires`); their ids are read once a prune, in
    /// one pass over the table (a prune's candidates are old, so a fire recorded since
    /// is never one of them).
    func notLatestScheduledFire() throws -> String {
        var ids: [Int] = []
        try reading { db in
            let settled = "\(db.dialect.greatest)(scheduled_at, coalesce(missed_through, scheduled_at))"
            try db.query("""
                SELECT f.id FROM fires f JOIN (
                    SELECT job, max(\(settled)) AS latest FROM fires WHERE trigger = 'schedule' GROUP BY job
                ) l ON l.job = f.job
                WHERE f.trigger = 'schedule' AND \(db.dialect.greatest)(f.scheduled_at, coalesce(f.missed_through, f.scheduled_at)) >= l.latest
                """) { ids.append($0.int(0)) }
        }
        return "fires.id NOT IN (" + ([-1] + ids).map(String.init).joined(separator: ", ") + ")"
    }
}

extension Int64 {
    var asInt: Int { Int(self) }
}
