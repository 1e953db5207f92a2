import SystemText
import Foundation
import SQLiteKit

extension Journal {
    /// Records that write `key` of run `runID` is about to be sent, committed before
    /// this returns. A new key is inserted; a key already `pending` or `failed` (a
    /// resend after a crash or a retry) is reset to `pending` with `attempts` + 1 and
    /// the new `sequence`. A `done` write is never reopened (the call changes nothing).
    /// - Throws: if the run is unknown or the journal cannot commit; then do not send.
    public func recordPending(runID: String, sequence: Int, key: String, method: String,
                              path: String, bodySHA256: String?) throws {
        try transaction { db in
            try insertPending(db, runID: runID, sequence: sequence, key: key, method: method, path: path,
                              bodySHA256: bodySHA256)
        }
    }

    /// What `beginWrite` found for a key.
    public enum WriteStart {
        /// Recorded `pending` (new, or a resend of a pending or failed key): send it.
        case send
        /// The key is journalled with another method, path or body: nothing recorded.
        case conflict(WriteRecord)
        /// The key is already `done`: replay its stored response, do not send.
        case done(WriteRecord)
    }

    /// In one transaction: looks up write `key` of run `runID` and, unless it is `done`
    /// or was journalled for a different request (same method, path and body digest
    /// required), records it `pending` as `recordPending` does. A staged outcome of the
    /// previous write commits with it, so a live write costs one commit. `runReads`: the
    /// run's reads so far (every pass), kept with the write (`runs show` counts a dead
    /// pass's reads from it). `reads`: recorded reads of the run (`RecordedReads`) to
    /// commit in the same transaction, before the write.
    /// - Throws: if the run is unknown or the journal cannot commit; then do not send.
    public func beginWrite(runID: String, sequence: Int, key: String, method: String, path: String,
                           bodySHA256: String?, runReads: Int? = nil, reads: [RecordedRead] = []) throws -> WriteStart {
        let now = nowMs()
        return try transaction { db in
            if !reads.isEmpty { try Journal.insertReads(db, runID: runID, reads, at: now) }
            if let existing = try Journal.selectWrites(db, where: "run_id = ?1 AND key = ?2", [.text(runID), .text(key)]).first {
                guard existing.method == method, existing.path == path, existing.bodySHA256 == bodySHA256 else {
                    return .conflict(existing)
                }
                if existing.state == .done { return .done(existing) }
            }
            try insertPending(db, runID: runID, sequence: sequence, key: key, method: method, path: path,
                              bodySHA256: bodySHA256, runReads: runReads)
            return .send
        }
    }

    private func insertPending(_ db: any JournalDatabase, runID: String, sequence: Int, key: String, method: String,
                               path: String, bodySHA256: String?, runReads: Int? = nil) throws {
        guard try db.first("SELECT 1 FROM runs WHERE id = ?1", [.text(runID)], { _ in true }) == true else {
            throw Journal.unknownRun(runID)
        }
        try db.run("""
            INSERT INTO writes (run_id, seq, key, method, path, body_sha256, state, created_at, updated_at, run_reads)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', ?7, ?7, ?8)
            ON CONFLICT (run_id, key) DO UPDATE SET
                seq = excluded.seq, state = 'pending', http_status = NULL, response = NULL,
                error = NULL, attempts = writes.attempts + 1, updated_at = excluded.updated_at,
                run_reads = coalesce(excluded.run_reads, writes.run_reads)
            WHERE writes.state != 'done'
            """,
            [.text(runID), .opt(sequence), .text(key), .text(method), .text(path), .opt(bodySHA256), .opt(nowMs()),
             .opt(runReads)])
    }

    /// Records that write `key` succeeded with `responseJSON`, the answer as canonical JSON
    /// text (nil — no body — is stored as SQL NULL). `deferred`: stage it to commit
    /// with the next transaction (see the type's contract) instead of committing now.
    public func recordDone(runID: String, key: String, httpStatus: Int? = nil, responseJSON: String?,
                           deferred: Bool = false) throws {
        // Masked: a loaded secret never reaches the journal file (see SecretRedactor).
        let json = responseJSON.map { SecretRedactor.shared.redact($0) }
        let outcome = StagedOutcome(runID: runID, key: key, state: .done, httpStatus: httpStatus, response: json,
                                    error: nil, at: nowMs())
        if deferred {
            try flush()   // at most one outcome is staged
            locked { _ in staged = outcome }
        } else {
            try transaction { db in try Journal.write(outcome, db) }
        }
    }

    /// Records that the server definitely refused write `key` (`httpStatus`, `error`).
    public func recordFailed(runID: String, key: String, httpStatus: Int?, error: String) throws {
        let outcome = StagedOutcome(runID: runID, key: key, state: .failed, httpStatus: httpStatus, response: nil,
                                    error: SecretRedactor.shared.redact(error), at: nowMs())
        try transaction { db in try Journal.write(outcome, db) }
    }

    /// The writes of a run in sequence order.
    public func writes(runID: String) throws -> [WriteRecord] {
        try reading { db in try Journal.selectWrites(db, where: "run_id = ?1 ORDER BY seq, created_at", [.text(runID)]) }
    }

    /// The write with this key in this run, or nil.
    public func write(runID: String, key: String) throws -> WriteRecord? {
        try reading { db in
            try Journal.selectWrites(db, where: "run_id = ?1 AND key = ?2", [.text(runID), .text(key)]).first
        }
    }

    /// The outcome of one write, as stored by `write(_:_:)`.
    struct StagedOutcome {
        let runID: String
        let key: String
        let state: WriteState
        let httpStatus: Int?
        let response: String?
        let error: String?
        /// When it was recorded (ms since 1970).
        let at: Int64
    }

    /// Stores `outcome` on its write row, inside the caller's transaction.
    static func write(_ outcome: StagedOutcome, _ db: any JournalDatabase) throws {
        let changed = try db.run("""
            UPDATE writes SET state = ?3, http_status = ?4, response = ?5, error = ?6, updated_at = ?7
            WHERE run_id = ?1 AND key = ?2
            """,
            [.text(outcome.runID), .text(outcome.key), .text(outcome.state.rawValue), .opt(outcome.httpStatus),
             .opt(outcome.response), .opt(outcome.error), .opt(outcome.at)])
        guard changed == 1 else {
            throw JournalError(.unknownRun, "the journal holds no pending write \(outcome.key) in run \(outcome.runID)")
        }
    }

    static func selectWrites(_ db: any JournalDatabase, where condition: String,
                                     _ values: [SQLValue]) throws -> [WriteRecord] {
        var writes: [WriteRecord] = []
        let columns = """
            run_id, seq, key, method, path, body_sha256, state, http_status, response, error, attempts,
            created_at, updated_at
            """
        try db.query("SELECT \(columns) FROM writes WHERE \(condition)", values) { row in
            let key = row.textOrNil(2) ?? ""
            guard let state = WriteState(rawValue: row.textOrNil(6) ?? "") else {
                throw JournalError(.corrupt, "the journal's write \(key) has an unknown state")
            }
            writes.append(WriteRecord(
                runID: row.textOrNil(0) ?? "", sequence: row.intOrNil(1) ?? 0, key: key, method: row.textOrNil(3) ?? "",
                path: row.textOrNil(4) ?? "", bodySHA256: row.textOrNil(5), state: state, httpStatus: row.intOrNil(7),
                responseJSON: row.textOrNil(8), error: row.textOrNil(9), attempts: row.intOrNil(10) ?? 1,
                createdAt: date(row.intOrNil(11)) ?? Date(timeIntervalSince1970: 0),
                updatedAt: date(row.intOrNil(12)) ?? Date(timeIntervalSince1970: 0)))
        }
        return writes
    }
}

extension Journal {
    /// The keys of every write journalled for run `runID` (any state, every pass): the
    /// writes the run has made or tried, which its write limit counts.
    public func writeKeys(runID: String) throws -> Set<String> {
        try reading { db in
            var keys = Set<String>()
            try db.query("SELECT key FROM writes WHERE run_id = ?1", [.text(runID)]) { keys.insert($0.text(0)) }
            return keys
        }
    }
}
