import Foundation
import SQLiteKit

/// One Hub read a run made, as the journal keeps it (see `RecordedReads`).
public struct RecordedRead: Sendable, Equatable {
    /// `rd1-…`: derived from the request and its occurrence (`RecordedReads.key`).
    public let key: String
    /// Its place in the pass that recorded it (1, 2, …).
    public let sequence: Int
    public let method: String
    public let path: String
    /// The answer as JSON text (`RecordedAnswer`).
    public let response: String

    public init(key: String, sequence: Int, method: String, path: String, response: String) {
        self.key = key
        self.sequence = sequence
        self.method = method
        self.path = path
        self.response = response
    }
}

/// How many reads a run's record holds, and their size.
public struct RecordedReadTotals: Sendable, Equatable {
    public var count = 0
    public var bytes = 0
    public init(count: Int = 0, bytes: Int = 0) {
        self.count = count
        self.bytes = bytes
    }
}

extension Journal {
    /// The recorded answer (JSON text) of read `key` of run `runID`, or nil.
    public func recordedRead(runID: String, key: String) throws -> String? {
        try reading { db in
            try db.first("SELECT response FROM reads WHERE run_id = ?1 AND key = ?2", [.text(runID), .text(key)]) { $0.text(0) }
        }
    }

    /// The recorded read `key` of run `runID` — the request it answered and its answer
    /// (JSON text) — or nil.
    public func recordedReadEntry(runID: String, key: String) throws -> (method: String, path: String, response: String)? {
        try reading { db in
            try db.first("SELECT method, path, response FROM reads WHERE run_id = ?1 AND key = ?2", [.text(runID), .text(key)]) {
                (method: $0.text(0), path: $0.text(1), response: $0.text(2))
            }
        }
    }

    /// How many reads run `runID` has recorded, and their bytes.
    public func recordedReadTotals(runID: String) throws -> RecordedReadTotals {
        try reading { db in
            try db.first("SELECT count(*), coalesce(sum(bytes), 0) FROM reads WHERE run_id = ?1", [.text(runID)]) {
                RecordedReadTotals(count: $0.int(0), bytes: $0.int(1))
            } ?? RecordedReadTotals()
        }
    }

    /// Records `reads` of run `runID`, committed when this returns (a read recorded
    /// again, by a later pass that read it live, replaces the older answer).
    public func recordReads(runID: String, _ reads: [RecordedRead]) throws {
        guard !reads.isEmpty else { return }
        try transaction { db in try Journal.insertReads(db, runID: runID, reads, at: nowMs()) }
    }

    /// Inserts `reads` inside the caller's transaction.
    static func insertReads(_ db: any JournalDatabase, runID: String, _ reads: [RecordedRead], at now: Int64) throws {
        for read in reads {
            try db.run("""
                INSERT INTO reads (run_id, key, seq, method, path, response, bytes, created_at)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                ON CONFLICT (run_id, key) DO UPDATE SET
                    seq = excluded.seq, method = excluded.method, path = excluded.path,
                    response = excluded.response, bytes = excluded.bytes, created_at = excluded.created_at
                """,
                [.text(runID), .text(read.key), .opt(read.sequence), .text(read.method), .text(read.path),
                 .text(read.response), .opt(read.response.utf8.count), .opt(now)])
        }
    }
}

extension Journal {
    /// Forgets the recorded reads of run `runID` (it succeeded: there is nothing to resume).
    public func dropRecordedReads(runID: String) throws {
        try transaction { db in _ = try db.run("DELETE FROM reads WHERE run_id = ?1", [.text(runID)]) }
    }
}
