import Foundation
import XCTest
import JournalTestSupport
@testable import RunJournal

/// Saved plans and people's decisions about them, on SQLite and PostgreSQL: an approval
/// is bound to the plan's content, cannot come from its maker or from a person lacking
/// what its writes need, counts once a person; a rejection stops every later apply; two
/// hosts on one journal see each other's decisions.
final class PlanApprovalStoreTests: XCTestCase {
    let contentA = String(repeating: "a", count: 64)
    let contentB = String(repeating: "b", count: 64)

    func plan(_ id: String = "run_plan1", content: String? = nil, maker: String = "usr_maker",
              kind: PlanRecord.MakerKind = .hub, required: Int = 2) -> PlanRecord {
        PlanRecord(id: id, contentSHA256: content ?? contentA, path: "/plans/p.json", recipePath: "/recipes/offboard.lua",
                   profile: "prod", maker: maker, makerKind: kind, writes: 3, permissions: ["users.manage", "roles.manage"],
                   required: required)
    }

    let both: Set<String> = ["users.manage", "roles.manage", "users.list"]

    func refusal<T>(_ body: () throws -> T) -> PlanApprovalError? {
        do { _ = try body() } catch let error as PlanApprovalError { return error } catch {
            XCTFail("unexpected \(error)")
            return nil
        }
        XCTFail("was not refused")
        return nil
    }

    func testARecordedPlanWaitsAndKeepsWhatItNeeds() throws {
        try eachJournalBackend { backend in
            let journal = try backend.journal()
            try journal.recordPlan(plan())
            let stored = try XCTUnwrap(try journal.plan("run_plan1"))
            XCTAssertEqual(stored.status, .waiting)
            XCTAssertEqual(stored.permissions, ["roles.manage", "users.manage"])
            XCTAssertEqual(stored.maker, "usr_maker")
            XCTAssertEqual(stored.makerKind, .hub)
            XCTAssertEqual(stored.required, 2)
            XCTAssertEqual(stored.shownStatus(required: 2), "waiting")
            XCTAssertEqual(try journal.plans().map(\.id), ["run_plan1"])
            // The same plan again changes nothing; other content under its id is refused.
            try journal.recordPlan(plan())
            XCTAssertEqual(refusal { try journal.recordPlan(self.plan(content: self.contentB)) }?.code, .changed)
        }
    }

    func testTheListIsNewestFirstBoundedAndCarriesEachPlansDecisions() throws {
        try eachJournalBackend { backend in
            let journal = try backend.journal()
            for id in ["run_a", "run_b", "run_c"] { try journal.recordPlan(plan(id)) }
            try journal.approvePlan("run_b", contentSHA256: contentA, person: "usr_one", personName: nil, permissions: both)
            try journal.rejectPlan("run_c", contentSHA256: contentA, person: "usr_two", personName: nil, reason: "no")
            let listed = try journal.plans(limit: 2)
            XCTAssertEqual(listed.map(\.id), ["run_c", "run_b"])
            XCTAssertEqual(listed.map { $0.decisions.map(\.kind) }, [[.rejected], [.approved]])
            XCTAssertEqual(try journal.plans(limit: 10).map(\.id), ["run_c", "run_b", "run_a"])
            XCTAssertEqual(try journal.plans(limit: 10).last?.decisions, [])
        }
    }

    func testTheMakerCannotApproveTheirOwnPlan() throws {
        try eachJournalBackend { backend in
            let journal = try backend.journal()
            try journal.recordPlan(plan())
            let error = refusal { try journal.approvePlan("run_plan1", contentSHA256: self.contentA, person: "usr_maker",
                                                          personName: "maker@example.com", permissions: self.both) }
            XCTAssertEqual(error?.code, .maker)
            XCTAssertEqual(error?.message, """
                usr_maker <maker@example.com> made plan run_plan1 and cannot approve it: another person must \
                (hubscript approve run_plan1 --profile THEIR_SESSION_PROFILE)
                """)
            XCTAssertEqual(try journal.plan("run_plan1")?.decisions, [])
        }
    }

    func testAnApproverMustHoldEveryPermissionThePlanNeeds() throws {
        try eachJournalBackend { backend in
            let journal = try backend.journal()
            try journal.recordPlan(plan())
            for held: Set<String> in [[], ["users.manage"], ["roles.manage", "users.list"]] {
                let error = refusal { try journal.approvePlan("run_plan1", contentSHA256: self.contentA, person: "usr_other",
                                                              personName: nil, permissions: held) }
                XCTAssertEqual(error?.code, .lacksPermissions)
                let lacking = ["roles.manage", "users.manage"].filter { !held.contains($0) }.joined(separator: ", ")
                XCTAssertEqual(error?.message, """
                    usr_other lacks what plan run_plan1's writes need: \(lacking); only a person holding \
                    roles.manage, users.manage can approve it
                    """)
            }
            XCTAssertEqual(try journal.plan("run_plan1")?.decisions, [])
        }
    }

    func testApprovalsCountOncePerPersonAndOnlyForTheirContent() throws {
        try eachJournalBackend { backend in
            let journal = try backend.journal()
            try journal.recordPlan(plan())
            try journal.approvePlan("run_plan1", contentSHA256: contentA, person: "usr_one", personName: "one@example.com", permissions: both)
            XCTAssertEqual(refusal { try journal.approvePlan("run_plan1", contentSHA256: self.contentA, person: "usr_one",
                                                             personName: nil, permissions: self.both) }?.code, .alreadyApproved)
            // Not yet enough: apply is refused, naming how many and by whom.
            let short = refusal { try journal.checkPlanMayApply("run_plan1", contentSHA256: self.contentA, required: 2) }
            XCTAssertEqual(short?.code, .notApproved)
            XCTAssertEqual(short?.message, """
                plan run_plan1 needs 2 approvals and has 1 (approved by usr_one <one@example.com>); nothing was sent.
                It needs 1 more from a person other than its maker usr_maker holding roles.manage, users.manage: \
                hubscript approve run_plan1 --profile THEIR_SESSION_PROFILE
                """)
            // Approving content other than the recorded one is refused.
            XCTAssertEqual(refusal { try journal.approvePlan("run_plan1", contentSHA256: self.contentB, person: "usr_two",
                                                             personName: nil, permissions: self.both) }?.code, .changed)
            try journal.approvePlan("run_plan1", contentSHA256: contentA, person: "usr_two", personName: nil, permissions: both)
            let record = try XCTUnwrap(try journal.checkPlanMayApply("run_plan1", contentSHA256: contentA, required: 2))
            XCTAssertEqual(record.approvals(for: contentA).map(\.person), ["usr_one", "usr_two"])
            XCTAssertEqual(record.shownStatus(required: 2), "approved")
            // The rules in force may demand more than when the plan was made: the larger wins.
            XCTAssertEqual(refusal { try journal.checkPlanMayApply("run_plan1", contentSHA256: self.contentA, required: 3) }?.code,
                           .notApproved)
        }
    }

    func testAPlanChangedAfterItsApprovalsIsRefused() throws {
        try eachJournalBackend { backend in
            let journal = try backend.journal()
            try journal.recordPlan(plan(required: 1))
            try journal.approvePlan("run_plan1", contentSHA256: contentA, person: "usr_one", personName: nil, permissions: both)
            let error = refusal { try journal.checkPlanMayApply("run_plan1", contentSHA256: self.contentB, required: 1) }
            XCTAssertEqual(error?.code, .changed)
            XCTAssertEqual(error?.message, """
                plan run_plan1 changed since it was recorded and approved (its content hash is bbbbbbbbbbbb…, not \
                aaaaaaaaaaaa…); nothing was sent. Make a new plan and have it approved.
                """)
        }
    }

    func testARejectedPlanCannotBeApprovedOrApplied() throws {
        try eachJournalBackend { backend in
            let journal = try backend.journal()
            try journal.recordPlan(plan(required: 1))
            try journal.approvePlan("run_plan1", contentSHA256: contentA, person: "usr_one", personName: nil, permissions: both)
            try journal.rejectPlan("run_plan1", contentSHA256: contentA, person: "usr_two", personName: "two@example.com",
                                   reason: "wrong tenant")
            XCTAssertEqual(try journal.plan("run_plan1")?.status, .rejected)
            for required in [0, 1] {
                let error = refusal { try journal.checkPlanMayApply("run_plan1", contentSHA256: self.contentA, required: required) }
                XCTAssertEqual(error?.code, .rejected)
                XCTAssertEqual(error?.message, """
                    plan run_plan1 was rejected by usr_two <two@example.com>: wrong tenant; nothing was sent. Make a new plan.
                    """)
            }
            XCTAssertEqual(refusal { try journal.approvePlan("run_plan1", contentSHA256: self.contentA, person: "usr_three",
                                                             personName: nil, permissions: self.both) }?.code, .rejected)
        }
    }

    func testAnUnrecordedPlanIsRefusedOnlyWhenApprovalsAreRequired() throws {
        try eachJournalBackend { backend in
            let journal = try backend.journal()
            XCTAssertNil(try journal.checkPlanMayApply("run_none", contentSHA256: contentA, required: 0))
            XCTAssertEqual(refusal { try journal.checkPlanMayApply("run_none", contentSHA256: self.contentA, required: 1) }?.code,
                           .notRecorded)
            XCTAssertEqual(refusal { try journal.approvePlan("run_none", contentSHA256: self.contentA, person: "usr_one",
                                                             personName: nil, permissions: self.both) }?.code, .notRecorded)
        }
    }

    func testAnAppliedPlanKeepsItsApplyAndTakesNoMoreDecisions() throws {
        try eachJournalBackend { backend in
            let journal = try backend.journal()
            try journal.recordPlan(plan(required: 1))
            try journal.approvePlan("run_plan1", contentSHA256: contentA, person: "usr_one", personName: nil, permissions: both)
            try journal.recordPlanApply("run_plan1", contentSHA256: contentA, person: "alice", exitCode: 4)
            XCTAssertEqual(try journal.plan("run_plan1")?.status, .waiting)
            try journal.recordPlanApply("run_plan1", contentSHA256: contentA, person: "alice", exitCode: 0)
            let record = try XCTUnwrap(try journal.plan("run_plan1"))
            XCTAssertEqual(record.status, .applied)
            XCTAssertEqual(record.decisions.map(\.kind), [.approved, .applyFailed, .applied])
            XCTAssertEqual(record.decisions.map(\.exitCode), [nil, 4, 0])
            XCTAssertEqual(refusal { try journal.approvePlan("run_plan1", contentSHA256: self.contentA, person: "usr_two",
                                                             personName: nil, permissions: self.both) }?.code, .alreadyApplied)
            // Applying it again is left to the run, which sends nothing and says so.
            XCTAssertNotNil(try journal.checkPlanMayApply("run_plan1", contentSHA256: contentA, required: 1))
        }
    }

    func testTwoHostsOnOneJournalSeeEachOthersDecisions() throws {
        try eachJournalBackend { backend in
            let location = try backend.newLocation()
            let hostA = try Journal.openChecked(location)
            let hostB = try Journal.openChecked(location)
            try hostA.recordPlan(plan(required: 2))
            try hostB.approvePlan("run_plan1", contentSHA256: contentA, person: "usr_one", personName: nil, permissions: both)
            // The same person approving from the other host still counts once.
            XCTAssertEqual(refusal { try hostA.approvePlan("run_plan1", contentSHA256: self.contentA, person: "usr_one",
                                                           personName: nil, permissions: self.both) }?.code, .alreadyApproved)
            try hostA.approvePlan("run_plan1", contentSHA256: contentA, person: "usr_two", personName: nil, permissions: both)
            XCTAssertNotNil(try hostB.checkPlanMayApply("run_plan1", contentSHA256: contentA, required: 2))
        }
    }
}
