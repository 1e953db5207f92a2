import SystemText
import Foundation
import SQLiteKit

/// A recipe's checkpoint value, as `hubscript state list` shows it.
public struct StateEntry: Sendable, Equatable {
    public let scope: String
    public let key: String
    /// Canonical JSON.
    public let valueJSON: String
    /// The run that set it last.
    public let runID: String
    public let updatedAt: Date
}

extension Journal {
    /// The value (canonical JSON) of `key` in `scope`, or nil. Sees every committed
    /// `setState` (and commits a staged write outcome first, as every read does).
    public func stateValue(scope: String, key: String) throws -> String? {
        try reading { db in
            try db.first("SELECT value FROM state WHERE scope = ?1 AND key = ?2", [.text(scope), .text(key)]) { $0.text(0) }
        }
    }

    /// Sets `key` in `scope` to `valueJSON` (stored masked by `masking`, the process's
    /// redactor), committed when this returns. Idempotent: setting the same value again
    /// (a resend after a crash) changes nothing else.
    public func setState(scope: String, key: String, valueJSON: String, runID: String, masking: SecretRedactor) throws {
        let now = nowMs()
        try transaction { db in
            _ = try db.run("""
                INSERT INTO state (scope, key, value, run_id, updated_at) VALUES (?1, ?2, ?3, ?4, ?5)
                ON CONFLICT (scope, key) DO UPDATE SET value = excluded.value, run_id = excluded.run_id,
                    updated_at = excluded.updated_at
                """, [.text(scope), .text(key), .text(masking.redact(valueJSON)), .text(runID), .int(Int(now))])
        }
    }

    /// Every checkpoint, or those of scopes starting with `scopePrefix`, by scope and key.
    public func stateEntries(scopePrefix: String = "") throws -> [StateEntry] {
        try reading { db in
            var out: [StateEntry] = []
            try db.query("SELECT scope, key, value, run_id, updated_at FROM state ORDER BY scope, key") { s in
                let scope = s.text(0)
                guard scope.hasPrefix(scopePrefix) else { return }
                out.append(StateEntry(scope: scope, key: s.text(1), valueJSON: s.text(2), runID: s.text(3),
                                      updatedAt: Journal.date(s.int(4)) ?? Date(timeIntervalSince1970: 0)))
            }
            return out
        }
    }
}
