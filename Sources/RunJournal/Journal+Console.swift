import Foundation
import SQLiteKit

/// Which runs a page of runs shows (`Journal.runsPage`): every field left nil matches all.
public struct RunQuery: Sendable, Equatable {
    public var status: RunStatus?
    public var mode: RunMode?
    /// Part of the recipe's path (matched as written, case included).
    public var recipe: String?
    public var profile: String?
    /// Runs of this job's fires.
    public var job: String?
    /// Runs of this trigger's events.
    public var trigger: String?
    /// Runs started at or after this time.
    public var startedFrom: Date?
    /// Runs started before this time.
    public var startedBefore: Date?
    /// The page after this position (the last run of the previous page); nil: the first.
    public var after: RunCursor?
    /// Runs a page holds (1…500).
    public var limit: Int

    public init(status: RunStatus? = nil, mode: RunMode? = nil, recipe: String? = nil, profile: String? = nil,
                job: String? = nil, trigger: String? = nil, startedFrom: Date? = nil, startedBefore: Date? = nil,
                after: RunCursor? = nil, limit: Int = 50) {
        self.status = status
        self.mode = mode
        self.recipe = recipe
        self.profile = profile
        self.job = job
        self.trigger = trigger
        self.startedFrom = startedFrom
        self.startedBefore = startedBefore
        self.after = after
        self.limit = limit
    }
}

/// A position in the runs, newest first: a run's start (ms since 1970) and id. Its text
/// form `MS.ID` goes in a page's "next" link.
public struct RunCursor: Sendable, Equatable {
    public var startedAtMs: Int64
    public var id: String

    public init(startedAtMs: Int64, id: String) {
        self.startedAtMs = startedAtMs
        self.id = id
    }

    /// The cursor of `run` (the page after it starts with the next older run).
    public init(_ run: RunRecord) {
        self.init(startedAtMs: Journal.ms(run.startedAt), id: run.id)
    }

    /// `MS.ID`, or nil when `text` is not one.
    public init?(text: String) {
        guard let dot = text.firstIndex(of: "."), let ms = Int64(text[..<dot]), ms >= 0 else { return nil }
        let id = String(text[text.index(after: dot)...])
        guard !id.isEmpty, !id.utf8.contains(0) else { return nil }
        self.init(startedAtMs: ms, id: id)
    }

    public var text: String { "\(startedAtMs).\(id)" }
}

/// One page of runs, newest first, and where the next begins (nil: this is the last).
public struct RunsPage: Sendable, Equatable {
    public var runs: [RunRecord]
    public var next: RunCursor?
}

/// What changes while a run goes: a live view compares `fingerprint`s to know when to redraw.
public struct RunActivity: Sendable, Equatable {
    public var run: RunRecord
    /// Writes journalled for the run.
    public var writeCount: Int
    /// When one of its writes last changed (ms since 1970; 0 without writes).
    public var lastWriteChangeMs: Int64
    /// Its writes done, failed, and sends attempted (`D/F/A`): what changes when a
    /// write's outcome is recorded within the same millisecond.
    public var writeStates: String = ""
    /// The sequence of the last line of output it kept (0: none).
    public var lastOutputSequence: Int = 0

    /// Equal for two readings exactly when nothing a viewer sees changed.
    public var fingerprint: String {
        let c = run.counts
        return [run.status.rawValue, String(run.attempts), String(c.reads), String(c.writes), String(c.replayed),
                String(c.planned), String(c.failed), String(writeCount), String(lastWriteChangeMs), writeStates,
                String(run.exitCode ?? -1), String(run.finishedAt.map { Journal.ms($0) } ?? 0),
                String(lastOutputSequence)].joined(separator: "-")
    }
}

/// One event a trigger received, for a listing (`Journal.triggerEventsPage`).
public struct TriggerEventSummary: Sendable, Equatable {
    public let eventID: String
    public let trigger: String
    public let eventType: String
    public let runID: String
    public let status: TriggerEventStatus
    /// How many deliveries of the event arrived (more than 1: duplicates, deduplicated).
    public let deliveries: Int
    public let receivedAt: Date
    public let updatedAt: Date
}

/// The journal as the operator console reads it: pages of runs, writes, fires and
/// trigger events, filtered in SQL, newest first, with bounded pages. Read-only.
extension Journal {
    /// The most a page of anything holds.
    public static let maxPageSize = 500

    /// A page of runs matching `query`, newest first (by start, then id descending).
    public func runsPage(_ query: RunQuery) throws -> RunsPage {
        let limit = min(max(1, query.limit), Journal.maxPageSize)
        return try reading { db in
            // A job that never fired, a trigger that never received, has no runs: say so
            // without reading every run.
            if let job = query.job, try db.first("SELECT 1 FROM fires WHERE job = ?1 LIMIT 1", [.text(job)], { _ in true }) == nil {
                return RunsPage(runs: [], next: nil)
            }
            if let trigger = query.trigger,
               try db.first("SELECT 1 FROM trigger_events WHERE trigger = ?1 LIMIT 1", [.text(trigger)], { _ in true }) == nil {
                return RunsPage(runs: [], next: nil)
            }
            var conditions: [String] = []
            var values: [SQLValue] = []
            func bind(_ value: SQLValue) -> String {
                values.append(value)
                return "?\(values.count)"
            }
            if let status = query.status { conditions.append("status = \(bind(.text(status.rawValue)))") }
            if let mode = query.mode { conditions.append("mode = \(bind(.text(mode.rawValue)))") }
            if let profile = query.profile { conditions.append("profile = \(bind(.text(profile)))") }
            if let recipe = query.recipe, !recipe.isEmpty {
                let placeholder = bind(.text(recipe))
                switch db.dialect {
                case .sqlite: conditions.append("instr(recipe_path, \(placeholder)) > 0")
                case .postgres: conditions.append("strpos(recipe_path, \(placeholder)) > 0")
                }
            }
            // Correlated, so the runs are still read newest first and a page stops at its
            // limit: fires by their run index, trigger events by their key (a trigger's
            // run id is TRIGGER@<event id>; substr counts characters on both backends).
            if let job = query.job {
                conditions.append("EXISTS (SELECT 1 FROM fires f WHERE f.run_id = runs.id AND f.job = \(bind(.text(job))))")
            }
            if let trigger = query.trigger {
                let name = bind(.text(trigger)), eventStart = bind(.int(trigger.unicodeScalars.count + 2))
                conditions.append("""
                    EXISTS (SELECT 1 FROM trigger_events t WHERE t.trigger = \(name) AND t.event_id = substr(runs.id, CAST(\(eventStart) AS INTEGER)) \
                    AND t.run_id = runs.id)
                    """)
            }
            if let from = query.startedFrom { conditions.append("started_at >= \(bind(.opt(Journal.ms(from))))") }
            if let before = query.startedBefore { conditions.append("started_at < \(bind(.opt(Journal.ms(before))))") }
            if let after = query.after {
                let ms = bind(.opt(after.startedAtMs)), id = bind(.text(after.id))
                conditions.append("(started_at < \(ms) OR (started_at = \(ms) AND id < \(id)))")
            }
            let condition = conditions.isEmpty ? "true" : conditions.joined(separator: " AND ")
            var runs = try Journal.selectRuns(db, where: condition, values,
                                              suffix: "ORDER BY started_at DESC, id DESC LIMIT \(limit + 1)")
            var next: RunCursor?
            if runs.count > limit {
                runs.removeLast(runs.count - limit)
                next = runs.last.map(RunCursor.init)
            }
            return RunsPage(runs: runs, next: next)
        }
    }

    /// The run `id` with what a live view watches, or nil for an unknown run.
    public func runActivity(id: String) throws -> RunActivity? {
        try reading { db in
            guard let run = try Journal.selectRuns(db, where: "id = ?1", [.text(id)]).first else { return nil }
            let tally = try db.first("""
                SELECT count(*), coalesce(max(updated_at), 0),
                       count(CASE WHEN state = 'done' THEN 1 END), count(CASE WHEN state = 'failed' THEN 1 END),
                       coalesce(sum(attempts), 0)
                FROM writes WHERE run_id = ?1
                """, [.text(id)]) { [$0.int(0), $0.int(1), $0.int(2), $0.int(3), $0.int(4)] } ?? [0, 0, 0, 0, 0]
            let lastLine = try db.first("SELECT coalesce(max(seq), 0) FROM run_output WHERE run_id = ?1", [.text(id)]) { $0.int(0) } ?? 0
            return RunActivity(run: run, writeCount: tally[0], lastWriteChangeMs: Int64(tally[1]),
                               writeStates: "\(tally[2])/\(tally[3])/\(tally[4])", lastOutputSequence: lastLine)
        }
    }

    /// `limit` writes of run `runID` from position `offset` (0-based), in the order the
    /// run first journalled them (as `runs show` lists them).
    public func writesPage(runID: String, offset: Int, limit: Int) throws -> [WriteRecord] {
        let limit = min(max(1, limit), Journal.maxPageSize)
        return try reading { db in
            try Journal.selectWrites(db, where: "run_id = ?1 ORDER BY created_at, seq, key LIMIT \(limit) OFFSET \(max(0, offset))",
                                     [.text(runID)])
        }
    }

    /// `limit` fires from position `offset`, newest first (as `fires(job:limit:)`): of
    /// `job` if given, with `status` if given.
    public func firesPage(job: String?, status: FireStatus? = nil, offset: Int, limit: Int) throws -> [FireRecord] {
        let limit = min(max(1, limit), Journal.maxPageSize)
        return try reading { db in
            var conditions: [String] = []
            var values: [SQLValue] = []
            if let job {
                values.append(.text(job))
                conditions.append("job = ?\(values.count)")
            }
            if let status {
                values.append(.text(status.rawValue))
                conditions.append("status = ?\(values.count)")
            }
            return try Journal.selectFires(db, where: conditions.isEmpty ? "true" : conditions.joined(separator: " AND "), values,
                                           suffix: "ORDER BY scheduled_at DESC, id DESC LIMIT \(limit) OFFSET \(max(0, offset))")
        }
    }

    /// `limit` trigger events from position `offset`, the most recently received first:
    /// of `trigger` if given.
    public func triggerEventsPage(trigger: String?, offset: Int, limit: Int) throws -> [TriggerEventSummary] {
        let limit = min(max(1, limit), Journal.maxPageSize)
        return try reading { db in
            var out: [TriggerEventSummary] = []
            let condition = trigger == nil ? "true" : "trigger = ?1"
            try db.query("""
                SELECT event_id, trigger, event_type, run_id, status, deliveries, received_at, updated_at FROM trigger_events
                WHERE \(condition) ORDER BY received_at DESC, event_id DESC, trigger DESC LIMIT \(limit) OFFSET \(max(0, offset))
                """, trigger.map { [.text($0)] } ?? []) { row in
                out.append(TriggerEventSummary(
                    eventID: row.text(0), trigger: row.text(1), eventType: row.text(2), runID: row.text(3),
                    status: TriggerEventStatus(rawValue: row.text(4)) ?? .received, deliveries: row.int(5),
                    receivedAt: Journal.date(row.int(6)) ?? Date(timeIntervalSince1970: 0),
                    updatedAt: Journal.date(row.int(7)) ?? Date(timeIntervalSince1970: 0)))
            }
            return out
        }
    }
}
