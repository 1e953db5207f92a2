import Foundation
import SystemText
import XCTest
import JSONKit
import JournalTestSupport
import ScriptHost
@testable import RunJournal
@testable import RecipeModules

/// A plan that creates something and then uses its id: placeholders in plan mode, bound
/// to the real ids during apply, and rebuilt from the journal after a crash.
final class PlanPlaceholderTests: XCTestCase {
    /// A Hub double that gives each create a new id (`usr_1`, `ent_2`, …) and, like the
    /// Hub, answers a key it has seen with its first response.
    final class CreatingHub {
        private(set) var sends: [String: Int] = [:]
        private(set) var sent: [(key: String, path: String)] = []
        private var stored: [String: ScriptValue] = [:]
        private var created = 0
        /// Called before each send with the 1-based send number; may throw.
        var fault: (Int) throws -> Void = { _ in }
        /// Creates answer without an id.
        var omitIDs = false

        func send(_ intent: WriteIntent) -> (String) throws -> ScriptValue {
            { key in
                self.sent.append((key, intent.path))
                self.sends[key, default: 0] += 1
                try self.fault(self.sent.count)
                if let earlier = self.stored[key] { return earlier }
                var value: ScriptValue = ["path": .string(intent.path)]
                if let creates = intent.creates, !self.omitIDs {
                    self.created += 1
                    value = [creates.field: .string("\(creates.prefix)_\(self.created)"), "path": .string(intent.path)]
                }
                self.stored[key] = value
                return value
            }
        }

        /// How many distinct creates the Hub made (keys answered once each).
        var creates: Int { created }
    }

    static func createUser(_ email: String) -> WriteIntent {
        WriteIntent(method: "POST", path: "/users", body: CanonicalJSON(["email": .string(email)]), summary: "create user \(email)",
                    predicted: ["email": .string(email)], creates: CreatedID(prefix: "usr"))
    }

    static func assignRole(_ user: String, _ role: String, key: String? = nil) -> WriteIntent {
        WriteIntent(method: "POST", path: "/users/\(user)/roles/\(role)", body: CanonicalJSON(["note": .string("for \(user)")]),
                    explicitKey: key, summary: "assign \(role) to \(user)", predicted: ["role_id": .string(role)])
    }

    static func grant(_ user: String, _ app: String) -> WriteIntent {
        WriteIntent(method: "POST", path: "/users/\(user)/entitlements", body: CanonicalJSON(["application_id": .string(app)]),
                    summary: "grant \(app) to \(user)", predicted: ["application_id": .string(app)],
                    creates: CreatedID(prefix: "ent"))
    }

    static func disable(_ entitlement: String) -> WriteIntent {
        WriteIntent(method: "PATCH", path: "/entitlements/\(entitlement)", body: CanonicalJSON(["status": "disabled"]),
                    summary: "disable \(entitlement)", predicted: ["id": .string(entitlement)])
    }

    /// The recipe: two new people, each with a role (the second's under an explicit key
    /// naming the user) and an application, then the first's entitlement disabled.
    /// Returns the ids the writes returned.
    @discardableResult
    static func onboard(_ c: WriteCoordinator, _ hub: CreatingHub) throws -> [String] {
        func perform(_ intent: WriteIntent) throws -> ScriptValue { try c.perform(intent, send: hub.send(intent)).value }
        let grace = try perform(createUser("grace@example.com"))["id"].stringValue ?? "?"
        _ = try perform(assignRole(grace, "role_support"))
        let wiki = try perform(grant(grace, "app_wiki"))["id"].stringValue ?? "?"
        let alan = try perform(createUser("alan@example.com"))["id"].stringValue ?? "?"
        _ = try perform(assignRole(alan, "role_support", key: "onboard-\(alan)"))
        _ = try perform(grant(alan, "app_wiki"))
        _ = try perform(disable(wiki))
        return [grace, wiki, alan]
    }

    static func makePlan(runID: String = "run_test") throws -> Plan {
        let c = WriteCoordinator(runID: runID, mode: .plan, journal: try Fixture.journal(), writeLimit: nil, masking: SecretRedactor())
        try onboard(c, CreatingHub())
        return Plan(runID: runID, recipePath: "recipes/onboard.lua", recipeSHA256: String(repeating: "ab", count: 32),
                    profile: "default", params: [:], createdAt: Fixture.start, writes: c.planned,
                    counts: RunCounts(reads: 0, writes: c.counts))
    }

    private func applying(_ plan: Plan, journal: Journal) throws -> WriteCoordinator {
        try journal.startRun(Fixture.runStart(plan.runID, mode: .apply), masking: SecretRedactor())
        return WriteCoordinator(runID: plan.runID, mode: .apply(plan), journal: journal, writeLimit: nil, masking: SecretRedactor())
    }

    func testEachPlannedCreatePredictsItsOwnPlaceholderAndThePlanRecordsIt() throws {
        let c = WriteCoordinator(runID: "run_test", mode: .plan, journal: try Fixture.journal(), writeLimit: nil, masking: SecretRedactor())
        let hub = CreatingHub()
        XCTAssertEqual(try Self.onboard(c, hub), ["usr_planned_1", "ent_planned_1", "usr_planned_2"])
        XCTAssertEqual(hub.sent.count, 0)
        XCTAssertEqual(c.planned.map(\.path), [
            "/users", "/users/usr_planned_1/roles/role_support", "/users/usr_planned_1/entitlements",
            "/users", "/users/usr_planned_2/roles/role_support", "/users/usr_planned_2/entitlements",
            "/entitlements/ent_planned_1",
        ])
        XCTAssertEqual(c.planned.map(\.creates?.placeholder), ["usr_planned_1", nil, "ent_planned_1", "usr_planned_2", nil,
                                                               "ent_planned_2", nil])
        XCTAssertEqual(c.planned[0].predicted, ["id": "usr_planned_1", "email": "grace@example.com"])
        XCTAssertEqual(c.planned[4].key, "onboard-usr_planned_2")
        XCTAssertEqual(c.planned[4].body, ["note": "for usr_planned_2"])
        // Deterministic: a second plan of the same recipe is the same plan.
        XCTAssertEqual(try Self.makePlan().writes, try Self.makePlan().writes)
    }

    func testApplyBindsEachCreatedIDAndSendsEveryPlannedWriteOnce() throws {
        try eachJournalBackend { backend in
            let plan = try Self.makePlan()
            let journal = try backend.journal()
            let c = try applying(plan, journal: journal)
            let hub = CreatingHub()
            XCTAssertEqual(try Self.onboard(c, hub), ["usr_1", "ent_2", "usr_3"])
            XCTAssertEqual(c.bindings.ids, ["usr_planned_1": "usr_1", "ent_planned_1": "ent_2", "usr_planned_2": "usr_3",
                                            "ent_planned_2": "ent_4"])
            XCTAssertEqual(hub.sent.map(\.path), [
                "/users", "/users/usr_1/roles/role_support", "/users/usr_1/entitlements",
                "/users", "/users/usr_3/roles/role_support", "/users/usr_3/entitlements", "/entitlements/ent_2",
            ])
            XCTAssertEqual(hub.sends.count, 7)
            XCTAssertTrue(hub.sends.values.allSatisfy { $0 == 1 })
            XCTAssertEqual(c.counts, WriteCounts(writes: 7))
            XCTAssertEqual(c.finish(), [])
            // A write without a placeholder goes with the plan's key; one with a placeholder
            // with the key a live run derives from the real ids (so `runs resume` finds it).
            let keys = hub.sent.map(\.key)
            guard keys.count == 7 else { return XCTFail("sent \(keys.count) writes, not 7") }
            XCTAssertEqual(keys[0], plan.writes[0].key)
            XCTAssertEqual(keys[3], plan.writes[3].key)
            XCTAssertNotEqual(keys[1], plan.writes[1].key)
            XCTAssertEqual(keys[4], "onboard-usr_3")
            let liveJournal = try Fixture.journal()
            try liveJournal.startRun(Fixture.runStart(plan.runID), masking: SecretRedactor())
            let live = WriteCoordinator(runID: plan.runID, mode: .live, journal: liveJournal, writeLimit: nil, masking: SecretRedactor())
            let liveHub = CreatingHub()
            try Self.onboard(live, liveHub)
            XCTAssertEqual(liveHub.sent.map(\.key), keys)
            XCTAssertEqual(try journal.writes(runID: plan.runID).map(\.state), Array(repeating: .done, count: 7))
        }
    }

    func testAWriteThatDivergesOnceTheIDsAreSubstitutedIsRefusedBeforeItIsSent() throws {
        try eachJournalBackend { backend in
            let plan = try Self.makePlan()
            let c = try applying(plan, journal: try backend.journal())
            let hub = CreatingHub()
            let user = try c.perform(Self.createUser("grace@example.com"), send: hub.send(Self.createUser("grace@example.com")))
            XCTAssertEqual(user.value["id"], "usr_1")
            // The recipe now gives the role to someone else than the user it created.
            let other = Self.assignRole("usr_ada", "role_support")
            XCTAssertLimitError("""
                apply: write 2 differs from the plan; nothing was sent for it.
                  plan:   POST /users/usr_1/roles/role_support {"note":"for usr_1"}
                  recipe: POST /users/usr_ada/roles/role_support {"note":"for usr_ada"}
                  changed: path /users/usr_1/roles/role_support → /users/usr_ada/roles/role_support; body note: "for usr_1" → "for usr_ada"
                  ids: usr_planned_1 = usr_1
                Make a new plan with hubscript plan, review it, and apply that one.
                """) { try c.perform(other, send: hub.send(other)) }
            // The placeholder itself (a recipe that tells plan from apply) is refused too.
            let literal = Self.assignRole("usr_planned_1", "role_support")
            XCTAssertLimitError("""
                apply: write 2 differs from the plan; nothing was sent for it.
                  plan:   POST /users/usr_1/roles/role_support {"note":"for usr_1"}
                  recipe: POST /users/usr_planned_1/roles/role_support {"note":"for usr_planned_1"}
                  changed: path /users/usr_1/roles/role_support → /users/usr_planned_1/roles/role_support; body note: "for usr_1" → "for usr_planned_1"
                  ids: usr_planned_1 = usr_1
                Make a new plan with hubscript plan, review it, and apply that one.
                """) { try c.perform(literal, send: hub.send(literal)) }
            // So is the right write under another explicit key.
            let keyed = Self.assignRole("usr_1", "role_support", key: "evt_1")
            XCTAssertLimitError("""
                apply: write 2 differs from the plan; nothing was sent for it.
                  plan:   POST /users/usr_1/roles/role_support {"note":"for usr_1"}
                  recipe: POST /users/usr_1/roles/role_support {"note":"for usr_1"}
                  changed: key \(plan.writes[1].key) → evt_1 (an explicit key changed, or an identical write was added or removed before it)
                  ids: usr_planned_1 = usr_1
                Make a new plan with hubscript plan, review it, and apply that one.
                """) { try c.perform(keyed, send: hub.send(keyed)) }
            XCTAssertEqual(hub.sent.count, 1)
            XCTAssertEqual(c.performed, 1)
        }
    }

    func testAnExplicitKeyNamingTheCreatedIDMustMatchThePlansOnceSubstituted() throws {
        let plan = try Self.makePlan()
        let c = try applying(plan, journal: try Fixture.journal())
        let hub = CreatingHub()
        for intent in [Self.createUser("grace@example.com"), Self.assignRole("usr_1", "role_support"),
                       Self.grant("usr_1", "app_wiki"), Self.createUser("alan@example.com")] {
            _ = try c.perform(intent, send: hub.send(intent))
        }
        let wrongKey = Self.assignRole("usr_3", "role_support", key: "onboard-usr_1")
        XCTAssertLimitError("""
            apply: write 5 differs from the plan; nothing was sent for it.
              plan:   POST /users/usr_3/roles/role_support {"note":"for usr_3"}
              recipe: POST /users/usr_3/roles/role_support {"note":"for usr_3"}
              changed: key onboard-usr_3 → onboard-usr_1 (an explicit key changed, or an identical write was added or removed before it)
              ids: usr_planned_2 = usr_3
            Make a new plan with hubscript plan, review it, and apply that one.
            """) { try c.perform(wrongKey, send: hub.send(wrongKey)) }
        let right = Self.assignRole("usr_3", "role_support", key: "onboard-usr_3")
        XCTAssertEqual(try c.perform(right, send: hub.send(right)).key, "onboard-usr_3")
    }

    func testAWriteNeedingAnIDTheApplyDidNotLearnIsRefused() throws {
        let plan = try Self.makePlan()
        let c = try applying(plan, journal: try Fixture.journal())
        let hub = CreatingHub()
        hub.omitIDs = true
        _ = try c.perform(Self.createUser("grace@example.com"), send: hub.send(Self.createUser("grace@example.com")))
        XCTAssertEqual(c.bindings.ids, [:])
        let assign = Self.assignRole("usr_x", "role_support")
        XCTAssertLimitError("""
            apply: write 2 differs from the plan; nothing was sent for it.
              plan:   POST /users/usr_planned_1/roles/role_support {"note":"for usr_planned_1"}
              recipe: POST /users/usr_x/roles/role_support {"note":"for usr_x"}
              changed: path /users/usr_planned_1/roles/role_support → /users/usr_x/roles/role_support; body note: "for usr_planned_1" → "for usr_x"
              ids: usr_planned_1 = (not created by this apply)
            Make a new plan with hubscript plan, review it, and apply that one.
            """) { try c.perform(assign, send: hub.send(assign)) }
        XCTAssertEqual(hub.sent.count, 1)
    }

    /// The apply stops with an unknown outcome at each write in turn (as a `kill -9`
    /// would leave it: that write pending), then finishes with `hubscript runs resume`
    /// (a live pass without the plan) or with the same plan applied again: each user and
    /// entitlement is created once, every write ends done, and each key is sent at most
    /// twice (once before the stop, once after).
    func testAnApplyStoppedAtAnyWriteThenResumedCreatesEachThingOnce() throws {
        try eachJournalBackend { backend in
            for stop in 1...7 {
                for finishWithApply in [false, true] {
                    let context = "\(backend): stopped at write \(stop), finished by \(finishWithApply ? "apply" : "runs resume")"
                    let plan = try Self.makePlan()
                    let journal = try backend.journal()
                    let hub = CreatingHub()
                    hub.fault = { n in if n == stop { throw FakeConnectionLost() } }
                    XCTAssertThrowsError(try Self.onboard(try applying(plan, journal: journal), hub), context) {
                        XCTAssertTrue($0 is FakeConnectionLost, "\(context): \($0)")
                    }
                    hub.fault = { _ in }
                    let finisher = finishWithApply
                        ? try applying(plan, journal: journal)
                        : WriteCoordinator(runID: plan.runID, mode: .live, journal: journal, writeLimit: nil, masking: SecretRedactor())
                    XCTAssertEqual(try Self.onboard(finisher, hub), ["usr_1", "ent_2", "usr_3"], context)
                    if finishWithApply {
                        XCTAssertEqual(finisher.bindings.ids.count, 4, context)
                        XCTAssertEqual(finisher.finish(), [], context)
                    }
                    XCTAssertEqual(finisher.counts.replayed, stop - 1, context)
                    XCTAssertEqual(hub.creates, 4, context)
                    XCTAssertEqual(Set(hub.sent.map(\.key)).count, 7, context)
                    XCTAssertTrue(hub.sends.values.allSatisfy { $0 <= 2 }, context)
                    let writes = try journal.writes(runID: plan.runID)
                    XCTAssertEqual(writes.count, 7, context)
                    XCTAssertTrue(writes.allSatisfy { $0.state == .done }, context)
                }
            }
        }
    }

    func testThePlanKnowsWhenTheJournalHoldsItAppliedInFull() throws {
        let plan = try Self.makePlan()
        let journal = try Fixture.journal()
        let hub = CreatingHub()
        hub.fault = { n in if n == 6 { throw FakeConnectionLost() } }
        XCTAssertThrowsError(try Self.onboard(try applying(plan, journal: journal), hub)) {
            XCTAssertTrue($0 is FakeConnectionLost, "\($0)")
        }
        func done() throws -> [String: ScriptValue] {
            try journal.flush()
            var out: [String: ScriptValue] = [:]
            for w in try journal.writes(runID: plan.runID) where w.state == .done {
                out[w.key] = try w.responseJSON.map { try JSONCodec.decode($0) } ?? .nilValue
            }
            return out
        }
        XCTAssertEqual(try done().count, 5)
        XCTAssertFalse(plan.isApplied(done: try done()))
        hub.fault = { _ in }
        try Self.onboard(WriteCoordinator(runID: plan.runID, mode: .live, journal: journal, writeLimit: nil, masking: SecretRedactor()), hub)
        XCTAssertTrue(plan.isApplied(done: try done()))
        // With another id for the first user, the later writes' keys are not the ones sent.
        var other = try done()
        other[plan.writes[0].key] = ["id": "usr_99"]
        XCTAssertFalse(plan.isApplied(done: other))
    }

    func testSubstitutionReplacesWholePlaceholdersOnly() {
        var b = PlanBindings()
        b.bind(PlannedCreation(placeholder: "usr_planned_1", field: "id"), response: ["id": "usr_a"])
        b.bind(PlannedCreation(placeholder: "ent_planned_1", field: "entitlement"), response: ["entitlement": "ent_b"])
        XCTAssertEqual(b.substitute("/users/usr_planned_1/x/usr_planned_1"), "/users/usr_a/x/usr_a")
        XCTAssertEqual(b.substitute("usr_planned_12 xusr_planned_1 usr_planned_1_planned_1"), "usr_planned_12 xusr_planned_1 usr_a_planned_1")
        XCTAssertEqual(b.substitute("usr_planned_"), "usr_planned_")
        XCTAssertEqual(b.substitute(["k": ["usr_planned_1", 3, ["ent_planned_1": "é usr_planned_1 é"]]] as ScriptValue),
                       ["k": ["usr_a", 3, ["ent_b": "é usr_a é"]]])
        // Hostile responses bind nothing: no id, not a string, too long, a control character.
        for response: ScriptValue in [[:], ["id": 7], ["id": .string(String(repeating: "a", count: 256))], ["id": "usr\n"],
                                      ["id": ""], "usr_x"] {
            var fresh = PlanBindings()
            fresh.bind(PlannedCreation(placeholder: "usr_planned_1", field: "id"), response: response)
            XCTAssertEqual(fresh.ids, [:], "\(response)")
        }
    }

    func testOnlyWellFormedPlaceholdersArePlaceholders() {
        for good in ["usr_planned_1", "ent_planned_42", "abcdefghijklmnop_planned_999999999"] {
            XCTAssertTrue(PlanPlaceholder.isPlaceholder(good), good)
        }
        for bad in ["usr_planned_0", "usr_planned_01", "usr_planned_", "_planned_1", "Usr_planned_1", "usr_ada",
                    "usr_planned_1x", "abcdefghijklmnopq_planned_1", "usr_planned_1000000000", "usr_planned_1\u{0}",
                    "usr_x_planned_1", "usr_planned_1_planned_2"] {
            XCTAssertFalse(PlanPlaceholder.isPlaceholder(bad), bad)
        }
    }

    func testAPlanFileKeepsWhatEachWriteCreates() throws {
        let plan = try Self.makePlan()
        let folder = try Fixture.tempDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("p.json")
        try plan.save(to: url, masking: SecretRedactor())
        XCTAssertEqual(try Plan.load(from: url), plan)
        let text = try String(contentsOf: url, encoding: .utf8)
        XCTAssertTrue(text.contains("""
                  "creates": {
                    "field": "id",
                    "placeholder": "usr_planned_1"
                  },
            """), text)
        XCTAssertEqual(text.components(separatedBy: "\"creates\"").count - 1, 4)
    }

    func testAPlanFileWithABadOrRepeatedPlaceholderIsNotAPlan() throws {
        let folder = try Fixture.tempDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("p.json")
        func refusal(_ edit: (inout [ScriptValue]) -> Void) throws -> String {
            var doc = try Self.makePlan().jsonValue()
            guard case .object(var fields) = doc, case .array(var writes)? = fields["writes"] else { return "?" }
            edit(&writes)
            fields["writes"] = .array(writes)
            doc = .object(fields)
            try Data(try JSONCodec.encode(doc).utf8).write(to: url)
            do { _ = try Plan.load(from: url); return "loaded" } catch { return "\(error)" }
        }
        func setCreates(_ w: inout ScriptValue, _ placeholder: ScriptValue) {
            guard case .object(var f) = w else { return }
            f["creates"] = ["placeholder": placeholder, "field": "id"]
            w = .object(f)
        }
        XCTAssertEqual(try refusal { setCreates(&$0[1], "usr_ada") },
                       "\(url.path) is not a valid hubscript plan: writes[1].creates.placeholder is missing or has the wrong type")
        XCTAssertEqual(try refusal { setCreates(&$0[1], 7) },
                       "\(url.path) is not a valid hubscript plan: writes[1].creates.placeholder is missing or has the wrong type")
        XCTAssertEqual(try refusal { setCreates(&$0[3], "usr_planned_1") },
                       "\(url.path) is not a valid hubscript plan: writes[3].creates.placeholder usr_planned_1 is created by an earlier write too")
    }
}

extension PlanPlaceholderTests {
    func testThePlanTableShowsWhichWriteCreatesWhichPlaceholder() throws {
        let lines = PlanTable.render(try Self.makePlan()).split(separator: "\n").map(String.init)
        XCTAssertEqual(Array(lines.dropFirst().prefix(4)), [
            "#  METHOD  TARGET                                   CHANGE",
            "1  POST    /users                                   create user grace@example.com as usr_planned_1 {\"email\":\"grace@example.com\"}",
            "2  POST    /users/usr_planned_1/roles/role_support  assign role_support to usr_planned_1 {\"note\":\"for usr_planned_1\"}",
            "3  POST    /users/usr_planned_1/entitlements        grant app_wiki to usr_planned_1 as ent_planned_1 {\"application_id\":\"app_wiki\"}",
        ])
    }
}
