import Foundation
import ScriptHost

extension Journal {
    /// Records that write `key` of run `runID` is about to be sent, committed before
    /// this returns. A new key is inserted; a key already `pending` or `failed` (a
    /// resend after a crash or a retry) is reset to `pending` with `attempts` + 1 and
    /// the new `sequence`. A `done` write is never reopened (the call changes nothing).
    /// - Throws: if the run is unknown or the journal cannot commit; then do not send.
    public func recordPending(runID: String, sequence: Int, key: String, method: String,
                              path: String, bodySHA256: String?) throws {
        let now = nowMs()
        try transaction { db in
            var known = false
            try db.query("SELECT 1 FROM runs WHERE id = ?1", [.text(runID)]) { _ in known = true }
            guard known else { throw Journal.unknownRun(runID) }
            try db.query("""
                INSERT INTO writes (run_id, seq, key, method, path, body_sha256, state, created_at, updated_at)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', ?7, ?7)
                ON CONFLICT (run_id, key) DO UPDATE SET
                    seq = excluded.seq, state = 'pending', http_status = NULL, response = NULL,
                    error = NULL, attempts = attempts + 1, updated_at = excluded.updated_at
                WHERE writes.state != 'done'
                """,
                [.text(runID), .init(sequence), .text(key), .text(method), .text(path), .init(bodySHA256), .integer(now)])
        }
    }

    /// Records that write `key` succeeded with `response` (stored as canonical JSON;
    /// `.nilValue` — no body — is stored as SQL NULL).
    public func recordDone(runID: String, key: String, httpStatus: Int? = nil, response: ScriptValue) throws {
        let json: String? = response.isNil ? nil : try JSONCodec.encode(response)
        try finishWrite(runID: runID, key: key, state: .done, httpStatus: httpStatus, response: json, error: nil)
    }

    /// Records that the server definitely refused write `key` (`httpStatus`, `error`).
    public func recordFailed(runID: String, key: String, httpStatus: Int?, error: String) throws {
        try finishWrite(runID: runID, key: key, state: .failed, httpStatus: httpStatus, response: nil, error: error)
    }

    /// The writes of a run in sequence order.
    public func writes(runID: String) throws -> [WriteRecord] {
        try locked { db in try Journal.selectWrites(db, where: "run_id = ?1 ORDER BY seq, created_at", [.text(runID)]) }
    }

    /// The write with this key in this run, or nil.
    public func write(runID: String, key: String) throws -> WriteRecord? {
        try locked { db in
            try Journal.selectWrites(db, where: "run_id = ?1 AND key = ?2", [.text(runID), .text(key)]).first
        }
    }

    private func finishWrite(runID: String, key: String, state: WriteState, httpStatus: Int?,
                             response: String?, error: String?) throws {
        let now = nowMs()
        try transaction { db in
            try db.query("""
                UPDATE writes SET state = ?3, http_status = ?4, response = ?5, error = ?6, updated_at = ?7
                WHERE run_id = ?1 AND key = ?2
                """,
                [.text(runID), .text(key), .text(state.rawValue), .init(httpStatus), .init(response), .init(error),
                 .integer(now)])
            guard db.changes == 1 else {
                throw JournalError(.unknownRun, "the journal holds no pending write \(key) in run \(runID)")
            }
        }
    }

    private static func selectWrites(_ db: SQLiteConnection, where condition: String,
                                     _ values: [SQLiteConnection.SQLValue]) throws -> [WriteRecord] {
        var writes: [WriteRecord] = []
        let columns = """
            run_id, seq, key, method, path, body_sha256, state, http_status, response, error, attempts,
            created_at, updated_at
            """
        try db.query("SELECT \(columns) FROM writes WHERE \(condition)", values) { row in
            let key = row.text(2) ?? ""
            guard let state = WriteState(rawValue: row.text(6) ?? "") else {
                throw JournalError(.corrupt, "the journal's write \(key) has an unknown state")
            }
            writes.append(WriteRecord(
                runID: row.text(0) ?? "", sequence: row.int(1) ?? 0, key: key, method: row.text(3) ?? "",
                path: row.text(4) ?? "", bodySHA256: row.text(5), state: state, httpStatus: row.int(7),
                responseJSON: row.text(8), error: row.text(9), attempts: row.int(10) ?? 1,
                createdAt: date(row.int(11)) ?? Date(timeIntervalSince1970: 0),
                updatedAt: date(row.int(12)) ?? Date(timeIntervalSince1970: 0)))
        }
        return writes
    }
}
