import Foundation
import SQLiteKit

/// What became of a fire of a scheduled job.
public enum FireStatus: String, Sendable, CaseIterable {
    /// Claimed, waiting for an earlier fire of the job to end (`overlap = "queue"`).
    case queued
    /// Claimed and running (or its process died: `JobScheduler` resumes it).
    case fired
    /// Not run: an earlier claim of the same fire, or the overlap policy.
    case skipped
    /// Passed without a run (`catch_up`); the row may stand for a range of fires.
    case missed
    case failed
    case succeeded
}

/// Why a fire happened: its schedule, or `hubscript jobs run` by hand.
public enum FireTrigger: String, Sendable {
    case schedule, manual
}

/// One row of the journal's `fires` table: one decision about one fire of a job (a
/// missed row may cover a range of scheduled times).
public struct FireRecord: Sendable, Equatable {
    /// The claim order: a larger id was recorded later.
    public let id: Int64
    public let job: String
    /// When the fire was scheduled (a manual fire: when it was asked for).
    public let scheduledAt: Date
    /// The last scheduled time of a missed range (its first is `scheduledAt`).
    public let missedThrough: Date?
    public let trigger: FireTrigger
    public let runID: String
    public let status: FireStatus
    public let reason: String?
    public let startedAt: Date?
    public let finishedAt: Date?
    public let durationMs: Int?
    public let exitCode: Int?
    /// What `on_failure` did about a failure.
    public let notified: String?
    public let recordedAt: Date
}

/// A fire to record.
public struct NewFire: Sendable {
    public var job: String
    public var scheduledAt: Date
    public var missedThrough: Date?
    public var trigger: FireTrigger
    public var runID: String
    public var status: FireStatus
    public var reason: String?

    public init(job: String, scheduledAt: Date, missedThrough: Date? = nil, trigger: FireTrigger = .schedule,
                runID: String, status: FireStatus, reason: String? = nil) {
        self.job = job
        self.scheduledAt = scheduledAt
        self.missedThrough = missedThrough
        self.trigger = trigger
        self.runID = runID
        self.status = status
        self.reason = reason
    }
}

/// A change to a recorded fire; nil fields keep what the row holds.
public struct FireChange: Sendable {
    public var status: FireStatus
    public var reason: String?
    public var startedAt: Date?
    public var finishedAt: Date?
    public var durationMs: Int?
    public var exitCode: Int?
    public var notified: String?

    public init(status: FireStatus, reason: String? = nil, startedAt: Date? = nil, finishedAt: Date? = nil,
                durationMs: Int? = nil, exitCode: Int? = nil, notified: String? = nil) {
        self.status = status
        self.reason = reason
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.durationMs = durationMs
        self.exitCode = exitCode
        self.notified = notified
    }
}

extension Journal {
    /// In one transaction: reads the latest scheduled time `job`'s schedule has settled
    /// (any recorded outcome of a scheduled fire, a missed range's last time included;
    /// nil if none), lets `body` decide, and records the fires it returns. Two
    /// schedulers deciding at once therefore take turns, and the second sees what the
    /// first recorded. Returns `body`'s result and the rows recorded.
    public func settleFires<T>(job: String, _ body: (Date?) throws -> (T, [NewFire])) throws -> (T, [FireRecord]) {
        let now = nowMs()
        return try transaction { db in
            let last = try db.first("""
                SELECT max(\(db.dialect.greatest)(scheduled_at, coalesce(missed_through, scheduled_at))) FROM fires
                WHERE job = ?1 AND trigger = 'schedule'
                """, [.text(job)]) { $0.intOrNil(0) } ?? nil
            let (result, fires) = try body(Journal.date(last))
            return (result, try fires.map { try Journal.insertFire(db, $0, recordedAt: now) })
        }
    }

    /// Records `fire`; returns the row.
    @discardableResult
    public func recordFire(_ fire: NewFire) throws -> FireRecord {
        let now = nowMs()
        return try transaction { db in try Journal.insertFire(db, fire, recordedAt: now) }
    }

    /// Changes the fire `id`: its status always, every other field given.
    @discardableResult
    public func updateFire(id: Int64, _ change: FireChange) throws -> FireRecord {
        try transaction { db in
            try db.run("""
                UPDATE fires SET status = ?2, reason = coalesce(?3, reason), started_at = coalesce(?4, started_at),
                    finished_at = coalesce(?5, finished_at), duration_ms = coalesce(?6, duration_ms),
                    exit_code = coalesce(?7, exit_code), notified = coalesce(?8, notified)
                WHERE id = ?1
                """, [.int(Int(id)), .text(change.status.rawValue), .opt(change.reason),
                      .opt(change.startedAt.map(Journal.ms)), .opt(change.finishedAt.map(Journal.ms)),
                      .opt(change.durationMs), .opt(change.exitCode), .opt(change.notified)])
            guard let row = try Journal.selectFires(db, where: "id = ?1", [.int(Int(id))]).first else {
                throw JournalError(.corrupt, "the journal holds no fire \(id)")
            }
            return row
        }
    }

    /// Fires newest first (by scheduled time, then claim order): of `job` if given.
    public func fires(job: String? = nil, limit: Int = 50) throws -> [FireRecord] {
        try reading { db in
            let suffix = "ORDER BY scheduled_at DESC, id DESC LIMIT \(max(0, limit))"
            if let job { return try Journal.selectFires(db, where: "job = ?1", [.text(job)], suffix: suffix) }
            return try Journal.selectFires(db, where: "true", [], suffix: suffix)
        }
    }

    /// Every row recorded for the run id `runID`, in claim order.
    public func fires(runID: String) throws -> [FireRecord] {
        try reading { db in try Journal.selectFires(db, where: "run_id = ?1", [.text(runID)], suffix: "ORDER BY id") }
    }

    /// `job`'s fires that are queued or fired (running, or interrupted if their run's
    /// lock is free), in claim order.
    public func activeFires(job: String) throws -> [FireRecord] {
        try reading { db in
            try Journal.selectFires(db, where: "job = ?1 AND status IN ('queued', 'fired')", [.text(job)], suffix: "ORDER BY id")
        }
    }

    private static func insertFire(_ db: any JournalDatabase, _ fire: NewFire, recordedAt: Int64) throws -> FireRecord {
        guard let id = try db.first("""
            INSERT INTO fires (job, scheduled_at, missed_through, trigger, run_id, status, reason, recorded_at)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING id
            """, [.text(fire.job), .opt(ms(fire.scheduledAt)), .opt(fire.missedThrough.map(ms)),
                  .text(fire.trigger.rawValue), .text(fire.runID), .text(fire.status.rawValue), .opt(fire.reason),
                  .opt(recordedAt)], { $0.int(0) }),
            let row = try selectFires(db, where: "id = ?1", [.int(id)]).first else {
            throw JournalError(.corrupt, "the fire \(fire.runID) vanished while it was being recorded")
        }
        return row
    }

    private static let fireColumns = """
        id, job, scheduled_at, missed_through, trigger, run_id, status, reason, started_at, finished_at,
        duration_ms, exit_code, notified, recorded_at
        """

    static func selectFires(_ db: any JournalDatabase, where condition: String, _ values: [SQLValue],
                                    suffix: String = "") throws -> [FireRecord] {
        var rows: [FireRecord] = []
        try db.query("SELECT \(fireColumns) FROM fires WHERE \(condition) \(suffix)", values) { row in
            let runID = row.text(5)
            guard let trigger = FireTrigger(rawValue: row.text(4)), let status = FireStatus(rawValue: row.text(6)) else {
                throw JournalError(.corrupt, "the journal's fire \(runID) has an unknown trigger or status")
            }
            rows.append(FireRecord(
                id: Int64(row.int(0)), job: row.text(1), scheduledAt: date(row.int(2)) ?? Date(timeIntervalSince1970: 0),
                missedThrough: date(row.intOrNil(3)), trigger: trigger, runID: runID, status: status,
                reason: row.textOrNil(7), startedAt: date(row.intOrNil(8)), finishedAt: date(row.intOrNil(9)),
                durationMs: row.intOrNil(10), exitCode: row.intOrNil(11), notified: row.textOrNil(12),
                recordedAt: date(row.int(13)) ?? Date(timeIntervalSince1970: 0)))
        }
        return rows
    }
}
