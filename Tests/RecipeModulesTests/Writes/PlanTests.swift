import Foundation
import SystemText
import XCTest
import JournalTestSupport
import ScriptHost
@testable import RunJournal
@testable import RecipeModules

final class PlanTests: XCTestCase {
    /// The two-write plan of an offboarding: suspend usr_ada, revoke ses_1.
    static func makePlan() throws -> Plan {
        let journal = try Fixture.journal()
        let c = WriteCoordinator(runID: "run_test", mode: .plan, journal: journal, writeLimit: nil, masking: SecretRedactor())
        _ = try c.perform(Fixture.suspend("usr_ada")) { _ in .nilValue }
        _ = try c.perform(Fixture.revokeSession("usr_ada", "ses_1")) { _ in .nilValue }
        return Plan(runID: "run_test", recipePath: "recipes/offboard.lua", recipeSHA256: String(repeating: "ab", count: 32),
                    profile: "default", params: ["user": "usr_ada"], createdAt: Fixture.start, writes: c.planned,
                    counts: RunCounts(reads: 3, writes: c.counts))
    }

    func testPlanModeReturnsPredictionsMarkedPlannedAndNeverSends() throws {
        try eachJournalBackend { backend in
            let journal = try backend.journal()
            try journal.startRun(Fixture.runStart(mode: .plan), masking: SecretRedactor())
            let c = WriteCoordinator(runID: "run_test", mode: .plan, journal: journal, writeLimit: nil, masking: SecretRedactor())
            let noSend: (String) throws -> ScriptValue = { _ in XCTFail("plan mode sent a write"); return .nilValue }
            let suspended = try c.perform(Fixture.suspend("usr_ada"), send: noSend)
            let revoked = try c.perform(Fixture.revokeSession("usr_ada", "ses_1"), send: noSend)
            XCTAssertEqual(suspended.value, ["id": "usr_ada", "status": "suspended", "planned": true])
            XCTAssertTrue(suspended.planned)
            XCTAssertFalse(suspended.replayed)
            XCTAssertEqual(revoked.value, .nilValue)
            XCTAssertEqual(c.counts, WriteCounts(planned: 2))
            XCTAssertEqual(c.planned.map(\.sequence), [1, 2])
            XCTAssertEqual(c.planned.map(\.key), [suspended.key, revoked.key])
            XCTAssertEqual(c.planned[0].body, ["reason": "offboarded"])
            XCTAssertEqual(c.planned[0].bodySHA256, Digest.sha256Hex(#"{"reason":"offboarded"}"#))
            XCTAssertEqual(c.planned[0].summary, "suspend usr_ada")
            XCTAssertNil(c.planned[1].body)
            XCTAssertEqual(try journal.writes(runID: "run_test"), [])
        }
    }

    func testPlannedWritesCountAgainstTheLimit() throws {
        try eachJournalBackend { backend in
            let c = WriteCoordinator(runID: "run_test", mode: .plan, journal: try backend.journal(), writeLimit: 1, masking: SecretRedactor())
            _ = try c.perform(Fixture.suspend("usr_ada")) { _ in .nilValue }
            XCTAssertLimitError(
                "limit exceeded: writes: the recipe's limit is 1 (limits.writes / --max-writes); stopped before write 2: POST /users/usr_bob/suspend"
            ) { try c.perform(Fixture.suspend("usr_bob")) { _ in .nilValue } }
            XCTAssertEqual(c.planned.count, 1)
        }
    }

    func testSaveAndLoadRoundTrip() throws {
        let dir = try Fixture.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let plan = try Self.makePlan()
        let url = dir.appendingPathComponent("offboard.plan.json")
        try plan.save(to: url, masking: SecretRedactor())
        XCTAssertEqual(try Plan.load(from: url), plan)
        try plan.save(to: url, masking: SecretRedactor())  // replacing an existing file
        XCTAssertEqual(try Plan.load(from: url), plan)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["offboard.plan.json"])
        let text = try String(contentsOf: url, encoding: .utf8)
        XCTAssertTrue(text.hasPrefix("{\n  \"counts\": {\n    \"failed\": 0,"), text)
        XCTAssertTrue(text.contains(#""format": "hubscript-plan/2""#))
        XCTAssertTrue(text.contains(#""created_at": "2026-11-30T14:22:33Z""#))
        XCTAssertTrue(text.contains(#""body": null"#))
    }

    func testAPlannedBodyKeepsEachNumbersKindThroughThePlanFileSoItsDigestStaysTheSame() throws {
        let dir = try Fixture.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var plan = try Self.makePlan()
        plan.writes = [PlannedWrite(sequence: 1, key: "k", method: "PATCH", path: "/users/usr_ada",
                                    body: ["f": 1.0, "i": 1, "big": 1e300, "n": nil, "s": "é/\n", "a": [0.5, -0.0]],
                                    summary: "update usr_ada", predicted: .nilValue)]
        let canonical = #"{"a":[0.5,-0.0],"big":1e+300,"f":1.0,"i":1,"n":null,"s":"é/\n"}"#
        XCTAssertEqual(plan.writes[0].bodySHA256, Digest.sha256Hex(canonical))
        let url = dir.appendingPathComponent("update.plan.json")
        try plan.save(to: url, masking: SecretRedactor())
        let loaded = try Plan.load(from: url)
        XCTAssertEqual(loaded.writes.map(\.bodySHA256), [Digest.sha256Hex(canonical)])
        XCTAssertEqual(loaded.writes.first?.body.map { String(decoding: $0.canonicalBytes, as: UTF8.self) }, canonical)
    }

    func testLoadExplainsWhatIsWrong() throws {
        let dir = try Fixture.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("p.json")
        func load(_ text: String) -> PlanError? {
            try? Data(text.utf8).write(to: url)
            do { _ = try Plan.load(from: url); return nil } catch { return error as? PlanError }
        }
        XCTAssertEqual(load("recipe = 1")?.code, .notAPlan)
        XCTAssertEqual(load(#"{"writes": []}"#)?.message,
                       "\(url.path) is not a hubscript plan (it has no \"format\": \"hubscript-plan/…\"); make one with hubscript plan RECIPE --out p.json")
        XCTAssertEqual(load(#"{"format": "hubscript-plan/3"}"#)?.message,
                       "\(url.path) is a plan of format hubscript-plan/3; this hubscript reads hubscript-plan/2. Make a new plan with this hubscript (hubscript plan RECIPE --out p.json).")
        // A plan of the format before numbered placeholders (every new user usr_planned).
        XCTAssertEqual(load(#"{"format": "hubscript-plan/1"}"#)?.message,
                       "\(url.path) is a plan of format hubscript-plan/1; this hubscript reads hubscript-plan/2. Make a new plan with this hubscript (hubscript plan RECIPE --out p.json).")
        var doc = try Self.makePlan().jsonValue()
        if case .object(var fields) = doc, case .array(var writes) = fields["writes"], case .object(var w) = writes[1] {
            w["key"] = nil
            writes[1] = .object(w)
            fields["writes"] = .array(writes)
            doc = .object(fields)
        }
        XCTAssertEqual(load(try JSONCodec.encode(doc))?.message,
                       "\(url.path) is not a valid hubscript plan: writes[1].key is missing or has the wrong type")
        XCTAssertEqual(try? Plan.load(from: dir.appendingPathComponent("absent.json")), nil)
    }

    func testTheTableListsEachWrite() throws {
        XCTAssertEqual(PlanTable.render(try Self.makePlan()), """
            Plan run_test: recipes/offboard.lua, profile default
            #  METHOD  TARGET                         CHANGE
            1  POST    /users/usr_ada/suspend         suspend usr_ada {"reason":"offboarded"}
            2  DELETE  /users/usr_ada/sessions/ses_1  revoke ses_1
            2 writes planned, 3 reads; nothing was sent.

            """)
        var empty = try Self.makePlan()
        empty.writes = []
        empty.counts.reads = 1
        XCTAssertEqual(PlanTable.render(empty), """
            Plan run_test: recipes/offboard.lua, profile default
            No writes planned (1 read); nothing was sent.

            """)
    }

    func testLongBodiesAreCutInTheTable() throws {
        var plan = try Self.makePlan()
        plan.writes = [PlannedWrite(sequence: 1, key: "k", method: "PATCH", path: "/users/usr_ada",
                                        body: ["display_name": .string(String(repeating: "x", count: 80))],
                                        summary: "rename usr_ada", predicted: .nilValue)]
        let row = PlanTable.render(plan).split(separator: "\n")[2]
        let cut = #"{"display_name":""# + String(repeating: "x", count: 42) + "…"
        XCTAssertEqual(cut.count, PlanTable.bodyWidth)
        XCTAssertEqual(row, "1  PATCH   /users/usr_ada  rename usr_ada " + cut)
    }
}
