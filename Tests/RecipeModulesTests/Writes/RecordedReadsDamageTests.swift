import Foundation
import ScriptHost
import SQLiteKit
import SystemText
import XCTest
import JournalTestSupport
@testable import RunJournal
@testable import RecipeModules

/// A damaged record of reads is refused before the resume acts on it, whatever the damage:
/// a record that parses but cannot be an answer to the request (another request's, a page
/// whose `next` is not a cursor, items that are not objects, an error whose status is not
/// a number) would otherwise end a list early or shape the recipe's decisions silently.
/// And the record's bounds are exact.
final class RecordedReadsDamageTests: XCTestCase {
    typealias Harness = RecordedReadsTests.Harness

    func testADamagedRecordOfAnyKindStopsTheResumeBeforeItActsOnIt() throws {
        let damages: [(name: String, sql: String, value: String, detail: String)] = [
            ("next is not a cursor", "response", #"{"items":[],"next":123}"#,
             "a recorded page needs a list of objects and a next cursor (a string or null)"),
            ("next is missing", "response", #"{"items":[]}"#,
             "a recorded page needs a list of objects and a next cursor (a string or null)"),
            ("items are not objects", "response", #"{"items":[1,"x"],"next":null}"#,
             "a recorded page needs a list of objects and a next cursor (a string or null)"),
            ("status is not a number", "response", #"{"error":{"code":"not_found","status":"404"}}"#,
             "a recorded error's status is not a number"),
            ("another request's record", "path", "/users/usr_ada",
             "it answers GET /users/usr_ada, not GET /entitlements"),
        ]
        try eachJournalBackend { backend in
            for damage in damages {
                let h = try Harness(backend)
                let prepared = try h.recipe(RecordedReadsTests.grantUnheld)
                let runID = "run_damaged"
                XCTAssertEqual(try h.run(prepared, runID: runID, maxWrites: 3).exitCode, 4)
                let (first, path) = try XCTUnwrap(try h.journal.reading { db in
                    try db.first("SELECT key, path FROM reads WHERE run_id = ?1 ORDER BY seq", [.text(runID)]) { ($0.text(0), $0.text(1)) }
                })
                XCTAssertEqual(path, "/entitlements", "\(backend)")
                try h.journal.transaction { db in
                    _ = try db.run("UPDATE reads SET \(damage.sql) = ?1 WHERE run_id = ?2 AND key = ?3",
                                   [.text(damage.value), .text(runID), .text(first)])
                }
                let writes = try h.journal.writes(runID: runID)
                let resumed = try h.run(prepared, runID: runID, maxWrites: 100)
                XCTAssertEqual(resumed.exitCode, 1, "\(backend), \(damage.name)")
                let message = resumed.failure?.message ?? ""
                XCTAssertTrue(message.contains("the journal's record of read \(first) of run \(runID) cannot be read"),
                              "\(backend), \(damage.name): \(message)")
                XCTAssertTrue(message.contains(damage.detail), "\(backend), \(damage.name): \(message)")
                XCTAssertTrue(message.contains("start a new run (a new run checks the Hub's data again)"), message)
                XCTAssertEqual(try h.journal.writes(runID: runID), writes, "\(backend), \(damage.name): nothing new sent")
                XCTAssertEqual(resumed.counts.writes, 0, "\(backend), \(damage.name)")
            }
        }
    }

    /// The cap holds reads up to and including its bounds, counts every pass together,
    /// and says so once, at the first read past it.
    func testTheCapHoldsReadsUpToItsBoundsOverEveryPass() throws {
        let journal = try Journal.inMemory()
        try journal.startRun(Fixture.runStart(), masking: SecretRedactor())
        let answer = RecordedAnswer.body(["id": "usr_ada"])
        let size = answer.text.utf8.count
        func recorder(count: Int, bytes: Int) throws -> (RecordedReads, () -> [String]) {
            let recorded = try RecordedReads(runID: "run_test", journal: journal, replaying: false, maxCount: count, maxBytes: bytes)
            var messages: [String] = []
            recorded.onRecordingStopped = { messages.append($0) }
            return (recorded, { messages })
        }
        func record(_ recorded: RecordedReads, _ n: Int) throws {
            for _ in 0..<n {
                try recorded.record(key: recorded.key(method: "GET", path: "/users/usr_ada", query: []), method: "GET",
                                    path: "/users/usr_ada", answer, masking: SecretRedactor())
            }
            try recorded.flush()
        }
        // Bytes: exactly three answers fit.
        let (first, firstMessages) = try recorder(count: 10, bytes: 3 * size)
        try record(first, 3)
        XCTAssertEqual(try journal.recordedReadTotals(runID: "run_test"), RecordedReadTotals(count: 3, bytes: 3 * size))
        XCTAssertEqual(firstMessages(), [])
        try record(first, 2)
        XCTAssertEqual(try journal.recordedReadTotals(runID: "run_test").count, 3)
        XCTAssertEqual(firstMessages().count, 1)
        XCTAssertTrue(first.isFull)
        // Count: a later pass gets what is left of the run's cap, exactly.
        let (second, secondMessages) = try recorder(count: 5, bytes: 1 << 20)
        XCTAssertFalse(second.isFull)
        for _ in 0..<3 { _ = second.key(method: "GET", path: "/users/usr_ada", query: []) }   // past the first pass's keys
        try record(second, 2)
        XCTAssertEqual(try journal.recordedReadTotals(runID: "run_test").count, 5)
        XCTAssertEqual(secondMessages(), [])
        try record(second, 1)
        XCTAssertEqual(try journal.recordedReadTotals(runID: "run_test").count, 5)
        XCTAssertEqual(secondMessages().count, 1)
        // A pass that starts at the cap records nothing.
        let (third, _) = try recorder(count: 5, bytes: 1 << 20)
        XCTAssertTrue(third.isFull)
    }
}
