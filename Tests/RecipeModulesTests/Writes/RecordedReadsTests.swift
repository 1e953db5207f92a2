import Foundation
import HTTPKit
import HubSandbox
import ScriptHost
import SQLiteKit
import SystemText
import XCTest
import JournalTestSupport
@testable import HubClient
@testable import RunJournal
@testable import RecipeModules
@testable import Runs

/// docs/design.md "Idempotency, the journal, resume": a resumed run is served the Hub
/// reads its earlier passes made, so it makes the same decisions and writes the same
/// report as a run that never stopped, and goes live where the record ends. In process,
/// on SQLite and PostgreSQL; the CLI's `kill -9` trials are `ResumeTruthCLITests`.
final class RecordedReadsTests: XCTestCase {
    /// An in-memory sandbox Hub, a journal of the backend, and the GETs that reached the Hub.
    final class Harness {
        let sandbox: HubSandbox
        let journal: Journal
        let root: URL
        let state: StateDirectory
        private let gets = ClientLock(0)

        init(_ backend: JournalBackend) throws {
            sandbox = try HubSandbox(options: SandboxOptions(storage: .memory, rateLimits: .off))
            journal = try backend.journal(clock: { Date() })
            root = FileManager.default.temporaryDirectory.appendingPathComponent("hubscript-recorded-reads-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            state = StateDirectory(explicit: root.appendingPathComponent("state").path)
        }

        deinit { try? FileManager.default.removeItem(at: root) }

        /// GET requests the recipe's reads sent to the Hub so far.
        var hubReads: Int { gets.withLock { $0 } }

        var connection: HubConnection {
            get throws {
                let sandbox = self.sandbox, gets = self.gets
                let client = try HubClient(
                    baseURL: URL(string: "http://127.0.0.1")!, credential: .apiKey(SandboxFixtures.jobsKeySecret),
                    transport: InProcessTransport(handler: { request in
                        // The key's own record, read once per pass to learn its permissions, is
                        // the client's, not the recipe's: it is never recorded.
                        if request.method == "GET", !request.path.hasPrefix("/api-keys/") { gets.withLock { $0 += 1 } }
                        return sandbox.handle(request)
                    }), options: HubClientOptions(rateLimitPerMinute: 0, profileName: "jobs", apiKeyID: SandboxFixtures.jobsKeyId))
                return HubConnection(profileName: "jobs", client: client, notice: nil)
            }
        }

        func recipe(_ source: String, params: [(String, String)] = []) throws -> PreparedRecipe {
            let url = root.appendingPathComponent("recipe.lua")
            try Data(source.utf8).write(to: url)
            return try PreparedRecipe(path: url.path, cliParams: params)
        }

        func run(_ prepared: PreparedRecipe, runID: String, maxWrites: Int? = nil, output: MemoryOutput = MemoryOutput(),
                 configure: (inout HubRunRequest) -> Void = { _ in }) throws -> HubRunOutcome {
            var request = HubRunRequest()
            request.runID = runID
            request.maxWrites = maxWrites
            request.outputFolder = root.appendingPathComponent("out-\(runID)")
            request.progress = MemoryProgressReporter()
            configure(&request)
            return try HubRecipeRun.execute(prepared, request: request, connection: try connection, journal: journal,
                                            state: state, output: output)
        }
    }

    /// Grants app_crm to the first `count` active users who lack it, deciding from the
    /// app's entitlements read up front (a list) and each user read once (a get).
    static let grantUnheld = """
        recipe { name = "grant-unheld", params = { count = { type = "integer", default = 6 } },
                 needs = { "users.list", "entitlements.manage" } }
        local held = {}
        for e in hub.entitlements.list { application_id = "app_crm" } do held[e.user_id] = true end
        local granted, already, n = 0, 0, 0
        for u in hub.users.list { status = "active" } do
          if n >= params.count then break end
          n = n + 1
          local user = hub.users.get(u.id)
          if held[user.id] then
            already = already + 1
          else
            hub.entitlements.grant(user.id, { application_id = "app_crm" })
            granted = granted + 1
          end
        end
        print(("granted %d, already held %d"):format(granted, already))
        """

    func testAResumeIsServedTheReadsTheStoppedPassMadeAndDecidesAsIt() throws {
        try eachJournalBackend { backend in
            // What a run that never stopped prints and reads, on a Hub of its own.
            let whole = try Harness(backend)
            let wholeOutput = MemoryOutput()
            let uninterrupted = try whole.run(try whole.recipe(Self.grantUnheld), runID: "run_whole", output: wholeOutput)
            XCTAssertEqual(uninterrupted.exitCode, 0)
            XCTAssertGreaterThan(uninterrupted.counts.writes, 3)

            let h = try Harness(backend)
            let prepared = try h.recipe(Self.grantUnheld)
            let first = try h.run(prepared, runID: "run_recorded", maxWrites: 3)
            XCTAssertEqual(first.exitCode, 4, "\(backend): \(first.failure?.message ?? "")")
            let readsBefore = h.hubReads
            XCTAssertGreaterThan(readsBefore, 0)

            let output = MemoryOutput()
            let resumed = try h.run(prepared, runID: "run_recorded", maxWrites: 100, output: output)
            XCTAssertEqual(resumed.exitCode, 0, "\(backend): \(resumed.failure?.message ?? "")")
            // Without the record, the resume would see its own 3 grants as someone else's.
            XCTAssertEqual(output.lines, wholeOutput.lines, "\(backend)")
            XCTAssertEqual(resumed.counts.writes, uninterrupted.counts.writes - 3)
            XCTAssertEqual(resumed.counts.replayed, 3)
            // Every read the stopped pass made is replayed; only the rest reaches the Hub.
            // (The stopped pass also counted the call that found the end of the
            // entitlements list, which sends nothing and has nothing to replay.)
            XCTAssertEqual(resumed.counts.readsReplayed, first.counts.reads - 1, "\(backend)")
            XCTAssertEqual(resumed.counts.reads, h.hubReads - readsBefore, "\(backend): live reads counted as reads")
            XCTAssertEqual(h.hubReads, whole.hubReads, "\(backend): both passes together read what one run reads")
            // A run that succeeded keeps no record.
            XCTAssertEqual(try h.journal.recordedReadTotals(runID: "run_recorded"), RecordedReadTotals())
        }
    }

    /// A record that ends early (a pass killed between writes loses its reads since the
    /// last write): the resume replays what is there, and from the first read the record
    /// lacks every read is live — even one recorded later — so decisions never mix an
    /// old answer after a new one.
    func testFromTheFirstReadTheRecordLacksEveryReadIsLive() throws {
        try eachJournalBackend { backend in
            let h = try Harness(backend)
            let prepared = try h.recipe(Self.grantUnheld)
            XCTAssertEqual(try h.run(prepared, runID: "run_gap", maxWrites: 3).exitCode, 4)
            // Drop the record of the second user's get, keep the later ones.
            let gets = try h.journal.reading { db in
                var rows: [(String, Int)] = []
                try db.query("SELECT key, seq FROM reads WHERE run_id = ?1 AND path LIKE '/users/%' ORDER BY seq",
                             [.text("run_gap")]) { rows.append(($0.text(0), $0.int(1))) }
                return rows
            }
            XCTAssertGreaterThanOrEqual(gets.count, 3, "\(backend)")
            try h.journal.transaction { db in
                _ = try db.run("DELETE FROM reads WHERE run_id = ?1 AND key = ?2", [.text("run_gap"), .text(gets[1].0)])
            }
            let before = h.hubReads
            let output = MemoryOutput()
            let resumed = try h.run(prepared, runID: "run_gap", maxWrites: 100, output: output)
            XCTAssertEqual(resumed.exitCode, 0, "\(backend): \(resumed.failure?.message ?? "")")
            // Replayed: the entitlements page, the users page and the first get; live: gets 2 to 6.
            XCTAssertEqual(resumed.counts.readsReplayed, 3, "\(backend)")
            XCTAssertEqual(h.hubReads - before, 5, "\(backend)")
        }
    }

    /// A damaged record is refused, saying what to do; nothing is sent on it.
    func testADamagedRecordStopsTheResumeBeforeItActsOnIt() throws {
        try eachJournalBackend { backend in
            let h = try Harness(backend)
            let prepared = try h.recipe(Self.grantUnheld)
            XCTAssertEqual(try h.run(prepared, runID: "run_damaged", maxWrites: 3).exitCode, 4)
            let first = try XCTUnwrap(try h.journal.reading { db in
                try db.first("SELECT key FROM reads WHERE run_id = ?1 ORDER BY seq", [.text("run_damaged")]) { $0.text(0) }
            })
            try h.journal.transaction { db in
                _ = try db.run("UPDATE reads SET response = ?1 WHERE run_id = ?2 AND key = ?3",
                               [.text(#"{"items":[{"id":"#), .text("run_damaged"), .text(first)])
            }
            let writes = try h.journal.writes(runID: "run_damaged").count
            let resumed = try h.run(prepared, runID: "run_damaged", maxWrites: 100)
            XCTAssertNotEqual(resumed.exitCode, 0)
            let message = resumed.failure?.message ?? ""
            XCTAssertTrue(message.contains("the journal's record of read \(first) of run run_damaged cannot be read"), message)
            XCTAssertTrue(message.contains("start a new run (a new run checks the Hub's data again)"), message)
            XCTAssertEqual(try h.journal.writes(runID: "run_damaged").count, writes, "\(backend): nothing new sent")
            XCTAssertEqual(resumed.counts.writes, 0)
        }
    }

    /// A definite answer such as a 404 is recorded and replayed as the same error.
    func testARecordedNotFoundIsReplayedAsTheSameError() throws {
        try eachJournalBackend { backend in
            let h = try Harness(backend)
            let prepared = try h.recipe("""
                recipe { name = "not-found", needs = { "users.list", "users.manage" } }
                local ok, err = pcall(hub.users.get, "usr_nobody_here")
                print(ok, err.code, err.status, err.message)
                hub.users.suspend("usr_ada", { reason = "test" })
                error("stop after the write")
                """)
            let first = MemoryOutput(), second = MemoryOutput()
            XCTAssertEqual(try h.run(prepared, runID: "run_404", output: first).exitCode, 1)
            let before = h.hubReads
            XCTAssertEqual(try h.run(prepared, runID: "run_404", output: second).exitCode, 1)
            XCTAssertEqual(h.hubReads, before, "\(backend): the 404 is replayed, not asked again")
            XCTAssertEqual(second.lines, first.lines, "\(backend)")
            XCTAssertTrue(first.lines.first?.hasPrefix("false\tnot_found\t404\t") == true, "\(first.lines)")
        }
    }

    /// Past the cap, reads are not recorded: the run says so once, and a resume reads
    /// them live.
    func testPastTheCapReadsAreLiveAndTheRunSaysSo() throws {
        try eachJournalBackend { backend in
            let h = try Harness(backend)
            let prepared = try h.recipe(Self.grantUnheld)
            let output = MemoryOutput()
            let first = try h.run(prepared, runID: "run_capped", maxWrites: 3, output: output) { $0.maxRecordedReads = 3 }
            XCTAssertEqual(first.exitCode, 4)
            let warnings = output.logs.filter { $0.level == .warn }.map(\.message)
            XCTAssertEqual(warnings, ["""
                this run's record of Hub reads is full (3 reads, \(try h.journal.recordedReadTotals(runID: "run_capped").bytes) bytes; \
                the cap is 3 reads or 64 MiB); later reads are not recorded, so a resume of this run reads them live and may \
                decide differently from this pass
                """], "\(backend)")
            XCTAssertEqual(try h.journal.recordedReadTotals(runID: "run_capped").count, 3)
            let before = h.hubReads
            let resumed = try h.run(prepared, runID: "run_capped", maxWrites: 100) { $0.maxRecordedReads = 3 }
            XCTAssertEqual(resumed.counts.readsReplayed, 3, "\(backend)")
            XCTAssertEqual(h.hubReads - before, 5, "\(backend): gets 2 to 6 are live")
        }
    }

    /// Keys follow the request and its occurrence; the query's order does not matter,
    /// its contents do.
    func testReadKeysAreDerivedFromTheRequestAndItsOccurrence() throws {
        let a = RecordedReads.disabled(runID: "run_k"), b = RecordedReads.disabled(runID: "run_k")
        let first = a.key(method: "GET", path: "/users", query: [("status", "active"), ("limit", "100")])
        XCTAssertEqual(first, b.key(method: "GET", path: "/users", query: [("limit", "100"), ("status", "active")]))
        XCTAssertNotEqual(first, a.key(method: "GET", path: "/users", query: [("status", "active"), ("limit", "100")]),
                          "a second identical read is another occurrence")
        XCTAssertNotEqual(b.key(method: "GET", path: "/users", query: [("status", "a&limit=100")]),
                          RecordedReads.disabled(runID: "run_k").key(method: "GET", path: "/users", query: [("status", "a"), ("limit", "100")]))
        XCTAssertNotEqual(first, RecordedReads.disabled(runID: "run_other").key(method: "GET", path: "/users",
                                                                                  query: [("status", "active"), ("limit", "100")]))
        XCTAssertTrue(first.hasPrefix("rd1-") && first.count == 44, first)
    }

    func testAnswersRoundTripThroughTheirText() throws {
        let answers: [RecordedAnswer] = [
            .body(["id": "usr_ada", "n": 3, "tags": ["a", .null]]),
            .error(HubError(code: "not_found", message: "No user usr_x", status: 404, details: ["id": "usr_x"], requestID: "req_1")),
            .page(items: [Data(#"{"id":"a"}"#.utf8), Data(#"{"id":"b"}"#.utf8)], next: "c_2"),
            .page(items: [], next: nil),
        ]
        for answer in answers { XCTAssertEqual(try RecordedAnswer.parse(answer.text), answer) }
        XCTAssertFalse(RecordedAnswer.isRecordable(HubError(code: "forbidden", message: "", status: 403)))
        XCTAssertFalse(RecordedAnswer.isRecordable(HubError(code: "rate_limited", message: "", status: 429)))
        XCTAssertFalse(RecordedAnswer.isRecordable(HubError(code: "unavailable", message: "", status: 503)))
        XCTAssertTrue(RecordedAnswer.isRecordable(HubError(code: "not_found", message: "", status: 404)))
    }

    /// A journal of schema 6 (before recorded reads) opens, migrates and records reads.
    func testAVersion6JournalIsMigrated() throws {
        let folder = try Fixture.tempDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("journal.sqlite").path
        do {
            let raw = try SQLiteDatabase(path: path)
            for step in JournalSchema.migrations.prefix(6) { try raw.exec(step) }
            try raw.exec("PRAGMA user_version = 6")
        }
        let journal = try Journal(path: path)
        try journal.startRun(Fixture.runStart(), masking: SecretRedactor())
        try journal.recordReads(runID: "run_test", [RecordedRead(key: "rd1-x", sequence: 1, method: "GET", path: "/users",
                                                                 response: #"{"body":{}}"#)])
        XCTAssertEqual(try journal.recordedRead(runID: "run_test", key: "rd1-x"), #"{"body":{}}"#)
        XCTAssertEqual(try journal.recordedReadTotals(runID: "run_test"), RecordedReadTotals(count: 1, bytes: 11))
    }
}
