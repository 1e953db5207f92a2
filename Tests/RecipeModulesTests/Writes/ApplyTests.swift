import Foundation
import SystemText
import XCTest
import JournalTestSupport
import ScriptHost
@testable import RunJournal
@testable import RecipeModules

final class ApplyTests: XCTestCase {
    private func applying(_ plan: Plan, journal: Journal, limit: Int? = nil) throws -> WriteCoordinator {
        try journal.startRun(Fixture.runStart(plan.runID, mode: .apply), masking: SecretRedactor())
        return WriteCoordinator(runID: plan.runID, mode: .apply(plan), journal: journal, writeLimit: limit, masking: SecretRedactor())
    }

    func testMatchingWritesAreSentWithThePlansKeys() throws {
        try eachJournalBackend { backend in
            let plan = try PlanTests.makePlan()
            let journal = try backend.journal()
            let c = try applying(plan, journal: journal)
            let hub = FakeHub()
            for intent in [Fixture.suspend("usr_ada"), Fixture.revokeSession("usr_ada", "ses_1")] {
                let result = try c.perform(intent, send: hub.send(intent))
                XCTAssertFalse(result.planned)
            }
            XCTAssertEqual(hub.sendOrder, plan.writes.map(\.key))
            XCTAssertEqual(c.counts, WriteCounts(writes: 2))
            XCTAssertEqual(try journal.writes(runID: plan.runID).map(\.state), [.done, .done])
            XCTAssertEqual(c.finish(), [])
        }
    }

    func testADivergingWriteIsRefusedBeforeItIsSent() throws {
        try eachJournalBackend { backend in
            let plan = try PlanTests.makePlan()
            let journal = try backend.journal()
            let c = try applying(plan, journal: journal)
            let hub = FakeHub()
            let changed = Fixture.suspend("usr_ada", reason: "left")
            XCTAssertLimitError("""
                apply: write 1 differs from the plan; nothing was sent for it.
                  plan:   POST /users/usr_ada/suspend {"reason":"offboarded"}
                  recipe: POST /users/usr_ada/suspend {"reason":"left"}
                  changed: body reason: "offboarded" → "left"
                Make a new plan with hubscript plan, review it, and apply that one.
                """) { try c.perform(changed, send: hub.send(changed)) }
            XCTAssertEqual(hub.totalSends, 0)
            XCTAssertEqual(try journal.writes(runID: plan.runID), [])
        }
    }

    func testAnotherTargetOrAMovedIdenticalWriteIsRefused() throws {
        try eachJournalBackend { backend in
            let plan = try PlanTests.makePlan()
            let c = try applying(plan, journal: try backend.journal())
            let other = Fixture.revokeSession("usr_ada", "ses_2")
            XCTAssertLimitError("""
                apply: write 1 differs from the plan; nothing was sent for it.
                  plan:   POST /users/usr_ada/suspend {"reason":"offboarded"}
                  recipe: DELETE /users/usr_ada/sessions/ses_2
                  changed: method POST → DELETE; path /users/usr_ada/suspend → /users/usr_ada/sessions/ses_2; body {"reason":"offboarded"} → (none)
                Make a new plan with hubscript plan, review it, and apply that one.
                """) { try c.perform(other) { _ in .nilValue } }
            XCTAssertLimitError("""
                apply: write 1 differs from the plan; nothing was sent for it.
                  plan:   POST /users/usr_ada/suspend {"reason":"offboarded"}
                  recipe: POST /users/usr_ada/suspend {"reason":"offboarded"}
                  changed: key hs1-c5f9f66908a0b76e10f9bceb615a0748705c6b4a → evt_9 (an explicit key changed, or an identical write was added or removed before it)
                Make a new plan with hubscript plan, review it, and apply that one.
                """) { try c.perform(Fixture.suspend("usr_ada", key: "evt_9")) { _ in .nilValue } }
        }
    }

    func testWritesBeyondThePlanAreRefused() throws {
        try eachJournalBackend { backend in
            let plan = try PlanTests.makePlan()
            let c = try applying(plan, journal: try backend.journal())
            let hub = FakeHub()
            for intent in [Fixture.suspend("usr_ada"), Fixture.revokeSession("usr_ada", "ses_1")] {
                _ = try c.perform(intent, send: hub.send(intent))
            }
            let extra = Fixture.revokeSession("usr_ada", "ses_2")
            XCTAssertLimitError("""
                apply: the recipe wants write 3 but the plan has only 2 writes; nothing was sent for it.
                  recipe: DELETE /users/usr_ada/sessions/ses_2
                Make a new plan with hubscript plan, review it, and apply that one.
                """) { try c.perform(extra, send: hub.send(extra)) }
            XCTAssertEqual(hub.totalSends, 2)
        }
    }

    func testFinishWarnsAboutPlannedWritesTheRunDidNotMake() throws {
        try eachJournalBackend { backend in
            let plan = try PlanTests.makePlan()
            let c = try applying(plan, journal: try backend.journal())
            _ = try c.perform(Fixture.suspend("usr_ada")) { _ in .nilValue }
            XCTAssertEqual(c.finish(), [
                "apply: the plan has 2 writes but the recipe made only 1; not made: #2 DELETE /users/usr_ada/sessions/ses_1",
            ])
        }
    }

    func testAResumedApplyReplaysWhatWasAlreadySent() throws {
        try eachJournalBackend { backend in
            let plan = try PlanTests.makePlan()
            let journal = try backend.journal()
            let hub = FakeHub()
            let first = try applying(plan, journal: journal)
            _ = try first.perform(Fixture.suspend("usr_ada"), send: hub.send(Fixture.suspend("usr_ada")))
            let resumed = try applying(plan, journal: journal)
            XCTAssertTrue(try resumed.perform(Fixture.suspend("usr_ada")) { _ in .nilValue }.replayed)
            let revoke = Fixture.revokeSession("usr_ada", "ses_1")
            XCTAssertFalse(try resumed.perform(revoke, send: hub.send(revoke)).replayed)
            XCTAssertEqual(hub.sendOrder, plan.writes.map(\.key))
        }
    }

    func testAPlanIsRefusedForAnotherRecipeProfileOrParams() throws {
        let plan = try PlanTests.makePlan()
        let sha = String(repeating: "ab", count: 32)
        XCTAssertNoThrow(try plan.check(recipeSHA256: sha, profile: "default", params: ["user": "usr_ada"]))
        func refusal(_ body: () throws -> Void) -> PlanError? {
            do { try body(); return nil } catch { return error as? PlanError }
        }
        let recipe = refusal { try plan.check(recipeSHA256: String(repeating: "cd", count: 32), profile: "default",
                                              params: ["user": "usr_ada"]) }
        XCTAssertEqual(recipe?.code, .recipeChanged)
        XCTAssertEqual(recipe?.message, """
            the plan was made with another version of recipes/offboard.lua (sha256 abababababab…, now cdcdcdcdcdcd…); \
            nothing was sent. Make a new plan with hubscript plan recipes/offboard.lua and apply that one.
            """)
        let profile = refusal { try plan.check(recipeSHA256: sha, profile: "prod", params: ["user": "usr_ada"]) }
        XCTAssertEqual(profile?.code, .profileDiffers)
        XCTAssertEqual(profile?.message, """
            the plan was made for profile "default", not "prod"; nothing was sent. Apply it with --profile default, \
            or make a new plan with hubscript plan recipes/offboard.lua --profile prod.
            """)
        let params = refusal { try plan.check(recipeSHA256: sha, profile: "default",
                                              params: ["user": "usr_bob", "reason": "left"]) }
        XCTAssertEqual(params?.code, .paramsDiffer)
        XCTAssertEqual(params?.message, """
            the plan was made with other params (plan → now: +reason: "left", user: "usr_ada" → "usr_bob"); \
            nothing was sent. Apply it with the plan's params, or make a new plan with hubscript plan \
            recipes/offboard.lua and these params.
            """)
    }
}
