import Foundation
import SQLiteKit
import SystemText

/// Saved plans and people's decisions about them (types: `PlanRecords.swift`).
extension Journal {
    /// Records a saved plan as waiting. Recording the same plan (id and content) again
    /// is a no-op; another content under the same id is refused (`.changed`).
    @discardableResult
    public func recordPlan(_ plan: PlanRecord) throws -> PlanRecord {
        let now = Int(nowMs())
        return try transaction { db in
            _ = try db.run("""
                INSERT INTO plans(id, content_sha256, path, recipe_path, profile, maker, maker_kind, writes, permissions,
                                  required, status, created_at, updated_at)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'waiting', ?11, ?11)
                ON CONFLICT (id) DO NOTHING
                """, [.text(plan.id), .text(plan.contentSHA256), .text(plan.path), .text(plan.recipePath), .text(plan.profile),
                      .text(plan.maker), .text(plan.makerKind.rawValue), .int(plan.writes),
                      .text(plan.permissions.joined(separator: " ")), .int(plan.required), .int(now)])
            let stored = try Journal.selectPlan(db, id: plan.id)!
            guard stored.contentSHA256 == plan.contentSHA256 else {
                throw PlanApprovalError(.changed, "the journal already holds plan \(plan.id) with other content; make a new plan")
            }
            return stored
        }
    }

    /// The plan `id` with its decisions; nil when the journal does not hold it.
    public func plan(_ id: String) throws -> PlanRecord? {
        try reading { db in try Journal.selectPlan(db, id: id) }
    }

    /// The most recent plans first, at most `limit`, with their decisions (two queries).
    public func plans(limit: Int = 100) throws -> [PlanRecord] {
        try reading { db in
            let newest = "SELECT id FROM plans ORDER BY created_at DESC, id DESC LIMIT ?1"
            let args: [SQLValue] = [.int(max(0, limit))]
            let decisions = try Journal.selectDecisions(db, where: "plan_id IN (\(newest))", args)
            var plans: [PlanRecord] = []
            try db.query("\(Journal.planColumns) WHERE id IN (\(newest)) ORDER BY created_at DESC, id DESC", args) { s in
                plans.append(Journal.planRecord(s, decisions: decisions[s.text(0)] ?? []))
            }
            return plans
        }
    }

    /// Records `person`'s approval of the plan `id` as it is now (`contentSHA256`), in one
    /// transaction that checks, against the journal as it stands (other hosts included):
    /// the plan is recorded, waiting, of this content; `person` did not make it (when its
    /// maker is a Hub user); `permissions` (the approver's, just verified) hold every
    /// permission the plan needs; `person` has not approved this content yet.
    /// - Throws: `PlanApprovalError` naming what is wrong and what to do.
    @discardableResult
    public func approvePlan(_ id: String, contentSHA256: String, person: String, personName: String?,
                            permissions: Set<String>) throws -> PlanRecord {
        let now = Int(nowMs())
        return try transaction { db in
            let plan = try Journal.decidablePlan(db, id: id, contentSHA256: contentSHA256)
            if plan.makerKind == .hub, plan.maker == person {
                throw PlanApprovalError(.maker, """
                    \(Journal.who(person, personName)) made plan \(id) and cannot approve it: \
                    another person must (hubscript approve \(id) --profile THEIR_SESSION_PROFILE)
                    """)
            }
            let lacking = plan.permissions.filter { !permissions.contains($0) }
            if !lacking.isEmpty {
                throw PlanApprovalError(.lacksPermissions, """
                    \(Journal.who(person, personName)) lacks what plan \(id)'s writes need: \(lacking.joined(separator: ", ")); \
                    only a person holding \(plan.permissions.joined(separator: ", ")) can approve it
                    """)
            }
            if plan.approvals(for: contentSHA256).contains(where: { $0.person == person }) {
                throw PlanApprovalError(.alreadyApproved, "\(Journal.who(person, personName)) already approved plan \(id); another person must approve it")
            }
            try Journal.insertDecision(db, plan: id, kind: .approved, sha: contentSHA256, person: person, name: personName,
                                       reason: nil, exitCode: nil, at: now)
            return try Journal.selectPlan(db, id: id)!
        }
    }

    /// Records `person`'s rejection of the plan `id` with `reason`: no apply of it will be
    /// accepted (make a new plan). The maker may withdraw their own plan this way.
    @discardableResult
    public func rejectPlan(_ id: String, contentSHA256: String, person: String, personName: String?,
                           reason: String) throws -> PlanRecord {
        let now = Int(nowMs())
        return try transaction { db in
            _ = try Journal.decidablePlan(db, id: id, contentSHA256: contentSHA256)
            try Journal.insertDecision(db, plan: id, kind: .rejected, sha: contentSHA256, person: person, name: personName,
                                       reason: reason, exitCode: nil, at: now)
            _ = try db.run("UPDATE plans SET status = 'rejected', updated_at = ?2 WHERE id = ?1", [.text(id), .int(now)])
            return try Journal.selectPlan(db, id: id)!
        }
    }

    /// Checks that the plan `id` of content `contentSHA256` may be applied under
    /// `required` approvals: recorded (when `required` > 0), not rejected, unchanged
    /// since recorded, and approved by `required` people. A plan already applied passes
    /// on its approvals: applying it again sends nothing (the run's journal says so). Returns the record
    /// (nil: not recorded and no approval required).
    /// - Throws: `PlanApprovalError` naming what is missing: how many approvals, by whom.
    public func checkPlanMayApply(_ id: String, contentSHA256: String, required: Int) throws -> PlanRecord? {
        guard let plan = try plan(id) else {
            guard required > 0 else { return nil }
            throw PlanApprovalError(.notRecorded, """
                plan \(id) needs \(required) approval\(required == 1 ? "" : "s") and the journal does not hold it \
                (a plan is recorded by hubscript plan RECIPE --out PLAN.json, with this journal); nothing was sent
                """)
        }
        let needed = max(required, plan.required)
        if plan.status == .rejected, let r = plan.rejection {
            throw PlanApprovalError(.rejected, """
                plan \(id) was rejected by \(Journal.who(r.person, r.personName)): \(r.reason ?? ""); nothing was sent. \
                Make a new plan.
                """)
        }
        guard needed > 0 else { return plan }
        if plan.contentSHA256 != contentSHA256 {
            let approved = plan.approvals(for: plan.contentSHA256).count
            throw PlanApprovalError(.changed, """
                plan \(id) changed since it was recorded\(approved > 0 ? " and approved" : "") (its content hash is \
                \(contentSHA256.prefix(12))…, not \(plan.contentSHA256.prefix(12))…); nothing was sent. \
                Make a new plan and have it approved.
                """)
        }
        let approvals = plan.approvals(for: contentSHA256)
        if approvals.count < needed {
            let by = approvals.isEmpty ? "none yet" : "approved by " + approvals.map { Journal.who($0.person, $0.personName) }.joined(separator: ", ")
            let more = needed - approvals.count
            throw PlanApprovalError(.notApproved, """
                plan \(id) needs \(needed) approval\(needed == 1 ? "" : "s") and has \(approvals.count) (\(by)); nothing was sent.
                It needs \(more) more from \(more == 1 ? "a person" : "people") other than its maker \
                \(Journal.who(plan.maker, nil))\(plan.permissions.isEmpty ? "" : " holding " + plan.permissions.joined(separator: ", ")): \
                hubscript approve \(id) --profile THEIR_SESSION_PROFILE
                """)
        }
        return plan
    }

    /// Records an apply of the plan `id` by `person`: `exitCode` 0 marks it applied.
    public func recordPlanApply(_ id: String, contentSHA256: String, person: String, exitCode: Int) throws {
        let now = Int(nowMs())
        try transaction { db in
            guard try Journal.selectPlan(db, id: id) != nil else { return }
            try Journal.insertDecision(db, plan: id, kind: exitCode == 0 ? .applied : .applyFailed, sha: contentSHA256,
                                       person: person, name: nil, reason: nil, exitCode: exitCode, at: now)
            if exitCode == 0 {
                _ = try db.run("UPDATE plans SET status = 'applied', updated_at = ?2 WHERE id = ?1", [.text(id), .int(now)])
            }
        }
    }

    /// `person <name>` or `person`.
    static func who(_ person: String, _ name: String?) -> String {
        guard let name, !name.isEmpty, name != person else { return person }
        return "\(person) <\(name)>"
    }

    /// The plan `id`, checked to be recorded, waiting and of content `contentSHA256`.
    private static func decidablePlan(_ db: any JournalDatabase, id: String, contentSHA256: String) throws -> PlanRecord {
        guard let plan = try selectPlan(db, id: id) else {
            throw PlanApprovalError(.notRecorded, """
                the journal holds no plan \(id) (plans are recorded by hubscript plan RECIPE --out PLAN.json; \
                hubscript plans list shows them)
                """)
        }
        switch plan.status {
        case .rejected: throw PlanApprovalError(.rejected, "plan \(id) was already rejected; make a new plan")
        case .applied: throw PlanApprovalError(.alreadyApplied, "plan \(id) was already applied; make a new plan")
        case .waiting: break
        }
        guard plan.contentSHA256 == contentSHA256 else {
            throw PlanApprovalError(.changed, """
                the plan file \(plan.path) is not the plan \(id) that was recorded (its content changed); \
                nothing was recorded. Make a new plan.
                """)
        }
        return plan
    }

    private static func insertDecision(_ db: any JournalDatabase, plan: String, kind: PlanDecision.Kind, sha: String,
                                       person: String, name: String?, reason: String?, exitCode: Int?, at: Int) throws {
        _ = try db.run("""
            INSERT INTO plan_decisions(plan_id, kind, content_sha256, person, person_name, reason, exit_code, decided_at)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
            """, [.text(plan), .text(kind.rawValue), .text(sha), .text(person), name.map(SQLValue.text) ?? .null,
                  reason.map(SQLValue.text) ?? .null, exitCode.map(SQLValue.int) ?? .null, .int(at)])
    }

    static func selectPlan(_ db: any JournalDatabase, id: String) throws -> PlanRecord? {
        let decisions = try selectDecisions(db, where: "plan_id = ?1", [.text(id)])
        return try db.first("\(planColumns) WHERE id = ?1", [.text(id)]) { planRecord($0, decisions: decisions[id] ?? []) }
    }

    static let planColumns = """
        SELECT id, content_sha256, path, recipe_path, profile, maker, maker_kind, writes, permissions, required, status,
               created_at FROM plans
        """

    static func planRecord(_ s: any JournalRow, decisions: [PlanDecision]) -> PlanRecord {
        PlanRecord(id: s.text(0), contentSHA256: s.text(1), path: s.text(2), recipePath: s.text(3), profile: s.text(4),
                   maker: s.text(5), makerKind: PlanRecord.MakerKind(rawValue: s.text(6)) ?? .os, writes: s.int(7),
                   permissions: s.text(8).split(separator: " ").map(String.init), required: s.int(9),
                   status: PlanRecord.Status(rawValue: s.text(10)) ?? .waiting, createdAt: Journal.date(s.int(11))!,
                   decisions: decisions)
    }

    /// The decisions matching `condition`, by plan, oldest first.
    static func selectDecisions(_ db: any JournalDatabase, where condition: String, _ args: [SQLValue]) throws -> [String: [PlanDecision]] {
        var byPlan: [String: [PlanDecision]] = [:]
        try db.query("""
            SELECT plan_id, kind, content_sha256, person, person_name, reason, exit_code, decided_at FROM plan_decisions
            WHERE \(condition) ORDER BY id
            """, args) { s in
            // An unknown kind (a newer hubscript's) counts as a rejection: never as an approval.
            byPlan[s.text(0), default: []].append(PlanDecision(
                kind: PlanDecision.Kind(rawValue: s.text(1)) ?? .rejected, contentSHA256: s.text(2), person: s.text(3),
                personName: s.textOrNil(4), reason: s.textOrNil(5), exitCode: s.intOrNil(6), decidedAt: Journal.date(s.int(7))!))
        }
        return byPlan
    }
}
