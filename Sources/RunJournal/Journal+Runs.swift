import Foundation
import SystemText
import SQLiteKit

extension Journal {
    /// Records the start of a run, or — when the journal already holds `start.id` — a
    /// resume of it: status back to `running`, `finishedAt` cleared, `mode` set to
    /// `start.mode` (an apply runs under its plan's id), `attempts` + 1. A resume keeps
    /// the recipe path, digest, params and profile first recorded; callers compare them.
    /// `maxWrites` and `timeoutSeconds` are replaced when given and kept when nil.
    /// The params are stored masked by `masking` (the process's redactor: the journal is
    /// shared by the process's runs).
    /// - Returns: the run as recorded now.
    @discardableResult
    public func startRun(_ start: RunStart, masking: SecretRedactor) throws -> RunRecord {
        let params = masking.redact(start.paramsJSON)
        let now = nowMs()
        return try transaction { db in
            try db.run("""
                INSERT INTO runs (id, recipe_path, recipe_sha256, params, profile, mode, status,
                                  started_at, output_folder, max_writes, timeout_ms)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'running', ?7, ?8, ?9, ?10)
                ON CONFLICT (id) DO UPDATE SET
                    mode = excluded.mode, status = 'running', finished_at = NULL, exit_code = NULL,
                    output_folder = coalesce(excluded.output_folder, runs.output_folder),
                    max_writes = coalesce(excluded.max_writes, runs.max_writes),
                    timeout_ms = coalesce(excluded.timeout_ms, runs.timeout_ms),
                    attempts = runs.attempts + 1
                """,
                [.text(start.id), .text(start.recipePath), .text(start.recipeSHA256), .text(params),
                 .text(start.profile), .text(start.mode.rawValue), .opt(now), .opt(start.outputFolder),
                 .opt(start.maxWrites), .opt(start.timeoutSeconds.map(Self.timeoutMilliseconds))])
            guard let run = try Journal.selectRuns(db, where: "id = ?1", [.text(start.id)]).first else {
                throw JournalError(.corrupt, "the run \(start.id) vanished while it was being recorded")
            }
            return run
        }
    }

    /// Records the start of a run under a new id — one `runExists` said the journal does
    /// not hold — and returns the record as inserted, without reading it back (a
    /// statement to prepare and a row to decode that every run's start would pay). Never
    /// resumes: if another process took the id in the meantime, it throws and records
    /// nothing. The params are stored masked by `masking`, as `startRun` stores them.
    @discardableResult
    public func startNewRun(_ start: RunStart, masking: SecretRedactor) throws -> RunRecord {
        // Neither backend keeps text past a NUL byte (SQLite's rows are read as C strings,
        // libpq sends parameters as C strings): the record returned would not be the one
        // stored. (The params are JSON, where a NUL is escaped.)
        for (field, text) in [("id", start.id), ("recipe path", start.recipePath), ("recipe digest", start.recipeSHA256),
                              ("profile", start.profile), ("output folder", start.outputFolder ?? "")]
        where text.utf8.contains(0) {
            throw JournalError(.unstorableText, "the run's \(field) \(text.debugDescription) holds a NUL byte, which the journal cannot store; nothing was recorded")
        }
        let params = masking.redact(start.paramsJSON)
        let now = nowMs()
        let timeoutMs = start.timeoutSeconds.map(Self.timeoutMilliseconds)
        try transaction { db in
            let inserted = try db.run("""
                INSERT INTO runs (id, recipe_path, recipe_sha256, params, profile, mode, status,
                                  started_at, output_folder, max_writes, timeout_ms)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'running', ?7, ?8, ?9, ?10)
                ON CONFLICT (id) DO NOTHING
                """,
                [.text(start.id), .text(start.recipePath), .text(start.recipeSHA256), .text(params),
                 .text(start.profile), .text(start.mode.rawValue), .opt(now), .opt(start.outputFolder),
                 .opt(start.maxWrites), .opt(timeoutMs)])
            guard inserted == 1 else {
                throw JournalError(.runIDTaken, "another run took the id \(start.id) as this one started; nothing was recorded: start the recipe again")
            }
        }
        return RunRecord(
            id: start.id, recipePath: start.recipePath, recipeSHA256: start.recipeSHA256, paramsJSON: params,
            profile: start.profile, mode: start.mode, status: .running,
            startedAt: Self.date(Int(now)) ?? Date(timeIntervalSince1970: 0), finishedAt: nil, counts: RunCounts(),
            outputFolder: start.outputFolder, attempts: 1, maxWrites: start.maxWrites,
            timeoutSeconds: timeoutMs.map { Double($0) / 1000 }, exitCode: nil)
    }

    /// Whether the journal holds a run with this id (cheaper than `run(id:)`).
    public func runExists(id: String) throws -> Bool {
        try reading { db in
            var found = false
            try db.query("SELECT 1 FROM runs WHERE id = ?1", [.text(id)]) { _ in found = true }
            return found
        }
    }

    /// Records the end of a run with its final status and, if given, its counts and the
    /// exit code of the pass.
    public func finishRun(id: String, status: RunStatus, counts: RunCounts? = nil, exitCode: Int? = nil) throws {
        let now = nowMs()
        try transaction { db in
            let changed: Int
            if let c = counts {
                // One statement, not two: each costs its compilation on every run.
                changed = try db.run("""
                    UPDATE runs SET status = ?2, finished_at = ?3, exit_code = ?4,
                                    reads = ?5, writes = ?6, replayed = ?7, planned = ?8, failed = ?9 WHERE id = ?1
                    """, [.text(id), .text(status.rawValue), .opt(now), .opt(exitCode),
                          .opt(c.reads), .opt(c.writes), .opt(c.replayed), .opt(c.planned), .opt(c.failed)])
            } else {
                changed = try db.run("UPDATE runs SET status = ?2, finished_at = ?3, exit_code = ?4 WHERE id = ?1",
                                     [.text(id), .text(status.rawValue), .opt(now), .opt(exitCode)])
            }
            guard changed == 1 else { throw Journal.unknownRun(id) }
        }
    }

    /// Notes the running totals of run `runID` (every pass so far, this one included) as
    /// a pass reads, cheaply: they are committed at most once every `progressInterval`.
    /// (Each write keeps the reads so far with it, `beginWrite(runReads:)`; so a pass
    /// that dies leaves its reads counted up to its last write, or up to a second before
    /// it died.)
    public func noteProgress(runID: String, counts: RunCounts) throws {
        let due: Bool = locked { _ in
            let now = MonotonicTime.seconds()
            guard now - progressCommittedAt >= Journal.progressInterval else { return false }
            progressCommittedAt = now
            return true
        }
        if due { try updateCounts(runID: runID, counts: counts) }
    }

    /// Stores the run's current counts (called as the run goes, and at its end).
    public func updateCounts(runID: String, counts: RunCounts) throws {
        try transaction { db in
            guard try Journal.setCounts(db, id: runID, counts) == 1 else { throw Journal.unknownRun(runID) }
        }
    }

    /// The run with this id, or nil.
    public func run(id: String) throws -> RunRecord? {
        try reading { db in try Journal.selectRuns(db, where: "id = ?1", [.text(id)]).first }
    }

    /// The most recently started runs, newest first.
    public func listRuns(limit: Int = 20) throws -> [RunRecord] {
        try reading { db in
            try Journal.selectRuns(db, where: "true", [], suffix: "ORDER BY started_at DESC, id DESC LIMIT \(max(0, limit))")
        }
    }

    static func unknownRun(_ id: String) -> JournalError {
        JournalError(.unknownRun, "the journal holds no run \(id) (see hubscript runs)")
    }

    /// Returns the number of rows changed (1, or 0 for an unknown run).
    private static func setCounts(_ db: any JournalDatabase, id: String, _ c: RunCounts) throws -> Int {
        try db.run("""
            UPDATE runs SET reads = ?2, writes = ?3, replayed = ?4, planned = ?5, failed = ?6 WHERE id = ?1
            """, [.text(id), .opt(c.reads), .opt(c.writes), .opt(c.replayed), .opt(c.planned), .opt(c.failed)])
    }

    /// A running run's reads and writes are at least what its writes recorded: the reads
    /// so far noted with each write, and every send (a pass that died, or one running,
    /// has not stored its counts).
    private static func runColumns(_ d: JournalDialect) -> String { """
        id, recipe_path, recipe_sha256, params, profile, mode, status, started_at, finished_at,
        CASE WHEN status = 'running' THEN \(d.greatest)(reads, coalesce((SELECT max(w.run_reads) FROM writes w WHERE w.run_id = runs.id), 0))
             ELSE reads END,
        CASE WHEN status = 'running' THEN \(d.greatest)(writes, coalesce((SELECT sum(w.attempts) FROM writes w WHERE w.run_id = runs.id), 0))
             ELSE writes END,
        replayed, planned, failed, output_folder, attempts, max_writes, timeout_ms, exit_code
        """
    }

    static func selectRuns(_ db: any JournalDatabase, where condition: String,
                                   _ values: [SQLValue], suffix: String = "") throws -> [RunRecord] {
        var runs: [RunRecord] = []
        try db.query("SELECT \(runColumns(db.dialect)) FROM runs WHERE \(condition) \(suffix)", values) { row in
            let id = row.textOrNil(0) ?? ""
            guard let mode = RunMode(rawValue: row.textOrNil(5) ?? ""),
                  let status = RunStatus(rawValue: row.textOrNil(6) ?? "") else {
                throw JournalError(.corrupt, "the journal's run \(id) has an unknown mode or status")
            }
            runs.append(RunRecord(
                id: id, recipePath: row.textOrNil(1) ?? "", recipeSHA256: row.textOrNil(2) ?? "",
                paramsJSON: row.textOrNil(3) ?? "{}", profile: row.textOrNil(4) ?? "", mode: mode, status: status,
                startedAt: date(row.intOrNil(7)) ?? Date(timeIntervalSince1970: 0), finishedAt: date(row.intOrNil(8)),
                counts: RunCounts(reads: row.intOrNil(9) ?? 0, writes: row.intOrNil(10) ?? 0, replayed: row.intOrNil(11) ?? 0,
                                  planned: row.intOrNil(12) ?? 0, failed: row.intOrNil(13) ?? 0),
                outputFolder: row.textOrNil(14), attempts: row.intOrNil(15) ?? 1,
                maxWrites: row.intOrNil(16), timeoutSeconds: row.intOrNil(17).map { Double($0) / 1000 },
                exitCode: row.intOrNil(18)))
        }
        return runs
    }

    /// The longest timeout a run can have, in seconds: the run's own ceiling
    /// (ScriptHost's `RunLimits.hostCeiling`, which a test keeps equal to this).
    public static let timeoutCeilingSeconds: Double = 24 * 3600

    /// A run's timeout in milliseconds as journalled: capped at the most any run gets
    /// (`timeoutCeilingSeconds`, which the run applies anyway), so a huge value a caller
    /// accepted (`--timeout 1e20`, a job's `timeout`) cannot trap converting to Int.
    static func timeoutMilliseconds(_ seconds: Double) -> Int {
        let capped = seconds.isNaN ? 0 : min(max(seconds, 0), Journal.timeoutCeilingSeconds)
        return Int((capped * 1000).rounded())
    }
}
