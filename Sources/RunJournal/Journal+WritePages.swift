import Foundation
import SQLiteKit

extension Journal {
    /// How many writes run `runID` has journalled (every pass).
    public func writeCount(runID: String) throws -> Int {
        try reading { db in
            try db.first("SELECT count(*) FROM writes WHERE run_id = ?1", [.text(runID)]) { $0.int(0) } ?? 0
        }
    }

    /// A page of run `runID`'s writes in the order the run first journalled them (a write
    /// resent by a later pass keeps its place; ties by the pass's sequence, then key):
    /// `limit` of them after the first `offset`. Only the page is read, so a run of
    /// tens of thousands of writes is shown a page at a time in constant memory.
    public func writesInRunOrder(runID: String, offset: Int, limit: Int) throws -> [WriteRecord] {
        try reading { db in
            try Journal.selectWrites(db, where: """
                run_id = ?1 ORDER BY created_at, seq, key LIMIT \(max(0, limit)) OFFSET \(max(0, offset))
                """, [.text(runID)])
        }
    }
}
