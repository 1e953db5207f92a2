import Foundation
import SQLiteKit

/// What became of a Hub event a trigger received (`hubscript listen`).
public enum TriggerEventStatus: String, Sendable {
    /// Journalled and answered 2xx; its run has not started (or the process died first).
    case received
    /// Its run started (a restart resumes it under the same run id).
    case running
    case succeeded
    case failed
}

/// One row of the journal's `trigger_events` table: one event for one trigger.
public struct TriggerEventRecord: Sendable, Equatable {
    public let eventID: String
    public let trigger: String
    public let eventType: String
    /// The delivery's raw body (the event).
    public let body: String
    /// `TRIGGER@<event id>`.
    public let runID: String
    public let status: TriggerEventStatus
    /// How many deliveries of the event arrived.
    public let deliveries: Int
}

extension Journal {
    /// Records a delivery of `eventID` for `trigger` in one transaction: a new event is inserted as
    /// `received`; a known one only counts the delivery. Returns the row as it now
    /// stands and whether this delivery was the first.
    public func recordTriggerEvent(eventID: String, trigger: String, eventType: String, body: String,
                                   runID: String) throws -> (record: TriggerEventRecord, isNew: Bool) {
        let now = nowMs()
        return try transaction { db in
            let inserted = try db.run("""
                INSERT INTO trigger_events(event_id, trigger, event_type, body, run_id, status, received_at, updated_at)
                VALUES (?1, ?2, ?3, ?4, ?5, 'received', ?6, ?6)
                ON CONFLICT (event_id, trigger) DO NOTHING
                """, [.text(eventID), .text(trigger), .text(eventType), .text(body), .text(runID), .int(Int(now))])
            if inserted == 0 {
                _ = try db.run("UPDATE trigger_events SET deliveries = deliveries + 1, updated_at = ?3 WHERE event_id = ?1 AND trigger = ?2",
                               [.text(eventID), .text(trigger), .int(Int(now))])
            }
            guard let record = try Journal.selectTriggerEvents(db, where: "event_id = ?1 AND trigger = ?2",
                                                               [.text(eventID), .text(trigger)]).first else {
                throw JournalError(.sqlite, "journal: the trigger event \(eventID) vanished")
            }
            return (record, inserted > 0)
        }
    }

    /// Sets the status of `trigger`'s run for an event.
    public func setTriggerEvent(_ eventID: String, trigger: String, status: TriggerEventStatus) throws {
        let now = nowMs()
        try transaction { db in
            _ = try db.run("UPDATE trigger_events SET status = ?3, updated_at = ?4 WHERE event_id = ?1 AND trigger = ?2",
                           [.text(eventID), .text(trigger), .text(status.rawValue), .int(Int(now))])
        }
    }

    /// Every trigger's row for an event.
    public func triggerEvents(_ eventID: String) throws -> [TriggerEventRecord] {
        try reading { db in try Journal.selectTriggerEvents(db, where: "event_id = ?1", [.text(eventID)]) }
    }

    /// Events received or running whose runs have not ended (a listener that died left
    /// them), oldest first.
    public func unfinishedTriggerEvents() throws -> [TriggerEventRecord] {
        try reading { db in try Journal.selectTriggerEvents(db, where: "status IN ('received', 'running')", []) }
    }

    static func selectTriggerEvents(_ db: any JournalDatabase, where condition: String, _ args: [SQLValue]) throws -> [TriggerEventRecord] {
        var out: [TriggerEventRecord] = []
        try db.query("""
            SELECT event_id, trigger, event_type, body, run_id, status, deliveries FROM trigger_events
            WHERE \(condition) ORDER BY received_at, event_id
            """, args) { s in
            out.append(TriggerEventRecord(eventID: s.text(0), trigger: s.text(1), eventType: s.text(2), body: s.text(3),
                                          runID: s.text(4), status: TriggerEventStatus(rawValue: s.text(5)) ?? .received,
                                          deliveries: s.int(6)))
        }
        return out
    }
}
