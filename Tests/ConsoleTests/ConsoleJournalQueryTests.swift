import Foundation
import XCTest
import SystemText
import JournalTestSupport
import RunJournal

/// The journal's console queries — runs filtered and paged, a run's writes in pages,
/// fires and trigger events newest first — on SQLite and PostgreSQL alike.
final class ConsoleJournalQueryTests: XCTestCase {
    /// 30 runs a minute apart (run_00 oldest): every third failed, every fifth a plan,
    /// profile "prod" for even ones, recipes a.lua / b.lua alternating; run_03 and
    /// run_06 are fires of "nightly"; the tenth is the run of an event of trigger
    /// "offboard", `offboard@wév_1` (an id as the listener makes it).
    private func seeded(_ backend: JournalBackend) throws -> (Journal, [String]) {
        final class Clock: @unchecked Sendable { var now = Date(timeIntervalSince1970: 1_796_000_000) }
        let clock = Clock()
        let journal = try backend.journal(clock: { clock.now })
        var ids: [String] = []
        for i in 0..<30 {
            clock.now = Date(timeIntervalSince1970: 1_796_000_000 + Double(i) * 60)
            let id = i == 9 ? "offboard@wév_1" : String(format: "run_%02d", i)
            ids.append(id)
            try journal.startRun(RunStart(id: id, recipePath: i % 2 == 0 ? "/srv/a.lua" : "/srv/b.lua", recipeSHA256: "00",
                                          paramsJSON: "{}", profile: i % 2 == 0 ? "prod" : "default",
                                          mode: i % 5 == 0 ? .plan : .run), masking: SecretRedactor())
            try journal.finishRun(id: id, status: i % 3 == 0 ? .failed : .succeeded)
        }
        for id in ["run_03", "run_06"] {
            try journal.recordFire(NewFire(job: "nightly", scheduledAt: clock.now, runID: id, status: .succeeded))
        }
        _ = try journal.recordTriggerEvent(eventID: "wév_1", trigger: "offboard", eventType: "user.suspended", body: "{}", runID: "offboard@wév_1")
        return (journal, ids)
    }

    func testFiltersSelectInSQL() throws {
        try eachJournalBackend { backend in
            let (journal, ids) = try seeded(backend)
            func page(_ query: RunQuery) throws -> [String] { try journal.runsPage(query).runs.map(\.id) }
            XCTAssertEqual(try page(RunQuery(limit: 500)), ids.reversed())
            XCTAssertEqual(try page(RunQuery(status: .failed, limit: 500)), ids.indices.filter { $0 % 3 == 0 }.reversed().map { ids[$0] })
            XCTAssertEqual(try page(RunQuery(mode: .plan, limit: 500)), ["run_25", "run_20", "run_15", "run_10", "run_05", "run_00"])
            XCTAssertEqual(try page(RunQuery(recipe: "b.l", limit: 500)).count, 15)
            XCTAssertEqual(try page(RunQuery(recipe: "B.LUA", limit: 500)), [], "matched as written")
            XCTAssertEqual(try page(RunQuery(recipe: "%", limit: 500)), [], "no wildcard")
            XCTAssertEqual(try page(RunQuery(profile: "prod", limit: 500)).count, 15)
            XCTAssertEqual(try page(RunQuery(job: "nightly", limit: 500)), ["run_06", "run_03"])
            XCTAssertEqual(try page(RunQuery(trigger: "offboard", limit: 500)), ["offboard@wév_1"])
            XCTAssertEqual(try page(RunQuery(trigger: "offboar", limit: 500)), [])
            XCTAssertEqual(try page(RunQuery(trigger: "offboard@w", limit: 500)), [])
            XCTAssertEqual(try page(RunQuery(job: "other", limit: 500)), [])
            let from = Date(timeIntervalSince1970: 1_796_000_000 + 10 * 60)
            let before = Date(timeIntervalSince1970: 1_796_000_000 + 13 * 60)
            XCTAssertEqual(try page(RunQuery(startedFrom: from, startedBefore: before, limit: 500)), ["run_12", "run_11", "run_10"])
            XCTAssertEqual(try page(RunQuery(status: .failed, profile: "prod", limit: 500)), ["run_24", "run_18", "run_12", "run_06", "run_00"])
        }
    }

    func testPagesCoverEveryRunOnceInOrder() throws {
        try eachJournalBackend { backend in
            let (journal, ids) = try seeded(backend)
            var seen: [String] = []
            var query = RunQuery(limit: 7)
            var pages = 0
            while true {
                let page = try journal.runsPage(query)
                seen += page.runs.map(\.id)
                pages += 1
                guard let next = page.next else { break }
                XCTAssertEqual(RunCursor(text: next.text), next)
                query.after = next
            }
            XCTAssertEqual(seen, ids.reversed())
            XCTAssertEqual(pages, 5)
            // A full last page says there is no next one.
            XCTAssertNil(try journal.runsPage(RunQuery(limit: 30)).next)
            XCTAssertNotNil(try journal.runsPage(RunQuery(limit: 29)).next)
        }
    }

    func testCursorText() {
        XCTAssertEqual(RunCursor(text: "1796000000000.job@2026-01-01T00:00:00Z"),
                       RunCursor(startedAtMs: 1_796_000_000_000, id: "job@2026-01-01T00:00:00Z"))
        for bad in ["", "12", ".x", "-1.x", "x.y", "12.", "12.a\u{0}b"] { XCTAssertNil(RunCursor(text: bad), bad) }
    }

    func testWritesFiresAndEventsPages() throws {
        try eachJournalBackend { backend in
            let (journal, _) = try seeded(backend)
            try journal.startRun(RunStart(id: "w", recipePath: "/srv/w.lua", recipeSHA256: "00", paramsJSON: "{}", profile: "p", mode: .run), masking: SecretRedactor())
            for i in 1...12 {
                try journal.recordPending(runID: "w", sequence: i, key: "k\(i)", method: "POST", path: "/users/\(i)", bodySHA256: nil)
            }
            XCTAssertEqual(try journal.writesPage(runID: "w", offset: 0, limit: 5).map(\.sequence), [1, 2, 3, 4, 5])
            XCTAssertEqual(try journal.writesPage(runID: "w", offset: 10, limit: 5).map(\.sequence), [11, 12])
            let activity = try XCTUnwrap(try journal.runActivity(id: "w"))
            XCTAssertEqual(activity.writeCount, 12)
            XCTAssertNil(try journal.runActivity(id: "nope"))
            try journal.recordDone(runID: "w", key: "k3", responseJSON: nil, masking: SecretRedactor())
            XCTAssertNotEqual(try journal.runActivity(id: "w")?.fingerprint, activity.fingerprint, "a write's outcome shows")

            try journal.recordFire(NewFire(job: "other", scheduledAt: Date(timeIntervalSince1970: 1_796_100_000), runID: "o1", status: .missed))
            XCTAssertEqual(try journal.firesPage(job: "nightly", offset: 0, limit: 10).map(\.runID).sorted(), ["run_03", "run_06"])
            XCTAssertEqual(try journal.firesPage(job: nil, offset: 0, limit: 1).map(\.runID), ["o1"])
            XCTAssertEqual(try journal.firesPage(job: nil, status: .missed, offset: 0, limit: 10).map(\.runID), ["o1"])
            XCTAssertEqual(try journal.firesPage(job: nil, offset: 1, limit: 10).count, 2)

            _ = try journal.recordTriggerEvent(eventID: "wév_1", trigger: "offboard", eventType: "user.suspended", body: "{}", runID: "offboard@wév_1")
            let events = try journal.triggerEventsPage(trigger: "offboard", offset: 0, limit: 10)
            XCTAssertEqual(events.map(\.eventID), ["wév_1"])
            XCTAssertEqual(events.first?.deliveries, 2, "the duplicate is counted, not listed")
            XCTAssertEqual(try journal.triggerEventsPage(trigger: "else", offset: 0, limit: 10), [])
        }
    }
}
