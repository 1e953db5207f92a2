import Foundation
import HubSandbox
import ScriptHost
import XCTest
@testable import Runs

/// The `state` module: checkpoints per recipe and profile in the journal, set as writes.
final class StatePluginTests: XCTestCase {
    typealias Harness = GatingTests.Harness

    static func recipe(name: String = "checkpoints", body: String) -> String {
        """
        recipe { name = "\(name)", params = { v = { type = "string", default = "" } } }
        \(body)
        """
    }

    func run(_ h: Harness, _ source: String, name: String = "c.lua", params: [(String, String)] = [],
             profile: String = "jobs", output: MemoryOutput = MemoryOutput(),
             configure: (inout HubRunRequest) -> Void = { _ in }) throws -> HubRunOutcome {
        let connection = try h.connection(key: SandboxFixtures.jobsKeySecret, profile: profile)
        return try h.execute(try h.recipe(name, source, params: params), connection, output: output, configure: configure)
    }

    func testAValueSetInOneRunIsReadByTheNextOfTheSameRecipeAndProfileOnly() throws {
        let h = try Harness()
        let set = Self.recipe(body: #"state.set("since", { t = params.v, n = 3 }) print(json.encode(state.get("since")))"#)
        let first = try run(h, set, params: [("v", "2026-12-01T10:00:00Z")])
        XCTAssertNil(first.failure, first.failure?.message ?? "")
        XCTAssertEqual(first.counts.writes, 1)
        let get = #"print(json.encode(state.get("since")), state.get("other"))"#
        let out = MemoryOutput()
        XCTAssertNil(try run(h, Self.recipe(body: get), output: out).failure)
        XCTAssertEqual(out.lines, [#"{"n":3,"t":"2026-12-01T10:00:00Z"}"# + "\tnil"])
        let otherProfile = MemoryOutput()
        XCTAssertNil(try run(h, Self.recipe(body: get), profile: "other", output: otherProfile).failure)
        XCTAssertEqual(otherProfile.lines, ["null\tnil"])
        let otherRecipe = MemoryOutput()
        XCTAssertNil(try run(h, Self.recipe(name: "another", body: get), output: otherRecipe).failure)
        XCTAssertEqual(otherRecipe.lines, ["null\tnil"])
        XCTAssertEqual(try h.journal.stateEntries().map { "\($0.scope) \($0.key) \($0.valueJSON)" },
                       [#"checkpoints@jobs since {"n":3,"t":"2026-12-01T10:00:00Z"}"#])
    }

    func testPlanModeRecordsTheSetAndAppliesNothing() throws {
        let h = try Harness()
        let outcome = try run(h, Self.recipe(body: #"state.set("since", "x") print(state.get("since"))"#)) { $0.mode = .plan }
        XCTAssertNil(outcome.failure, outcome.failure?.message ?? "")
        XCTAssertEqual(outcome.plan?.writes.map { "\($0.method) \($0.path) \($0.summary)" }, [#"PUT /state/since state since = "x""#])
        XCTAssertEqual(try h.journal.stateEntries(), [])
    }

    func testAResumedRunReplaysItsSetInsteadOfApplyingItAgain() throws {
        let h = try Harness()
        let source = Self.recipe(body: #"state.set("since", params.v) if params.v == "fail" then error("boom") end"#)
        let failed = try run(h, source, params: [("v", "fail")]) { $0.runID = "run_state_resume" }
        XCTAssertEqual(failed.exitCode, 1)
        XCTAssertEqual(failed.counts.writes, 1)
        // Another run moves the checkpoint on; the resume must not set it back.
        XCTAssertNil(try run(h, source, params: [("v", "later")]).failure)
        let resumed = try run(h, source, params: [("v", "fail")]) { $0.runID = "run_state_resume" }
        XCTAssertEqual(resumed.counts.replayed, 1)
        XCTAssertEqual(resumed.counts.writes, 0, "nothing applied again")
        XCTAssertEqual(try h.journal.stateValue(scope: "checkpoints@jobs", key: "since"), #""later""#)
    }

    func testASetIsAWriteEventAndCountsAgainstTheWriteLimit() throws {
        let h = try Harness()
        let out = MemoryOutput()
        let outcome = try run(h, Self.recipe(body: #"for i = 1, 3 do state.set("n", i) end"#), output: out) { $0.maxWrites = 2 }
        XCTAssertEqual(outcome.exitCode, 4, outcome.failure?.message ?? "")
        XCTAssertEqual(out.events.filter { $0.type == "write" }.map { $0.fields["path"]?.stringValue }, ["/state/n", "/state/n"])
        XCTAssertEqual(try h.journal.stateValue(scope: "checkpoints@jobs", key: "n"), "2")
    }

    func testBadKeysAndValuesAreRefusedWithTheirReason() throws {
        let h = try Harness()
        let cases: [(String, String)] = [
            (#"state.set("", 1)"#, "bad argument #1 to 'state.set' (a key is 1–128 bytes of printable text)"),
            (#"state.set(string.rep("k", 129), 1)"#, "bad argument #1 to 'state.set' (a key is 1–128 bytes of printable text)"),
            (#"state.get("a\nb")"#, "bad argument #1 to 'state.get' (a key is 1–128 bytes of printable text)"),
            (#"state.set("k")"#, "bad argument #2 to 'state.set' (a value is required (use json.null to store null))"),
            (#"state.set("k", string.rep("x", 70000))"#,
             "bad argument #2 to 'state.set' (the value is 70002 bytes as JSON, over the 64 KiB limit)"),
            (#"state.set("k", { f = print })"#, "bad argument #2 to 'state.set' (cannot convert a function value)"),
        ]
        for (body, message) in cases {
            let outcome = try run(h, Self.recipe(body: body))
            let shown = outcome.failure?.message ?? ""
            XCTAssertTrue(shown.hasSuffix("/c.lua:2: " + message), "\(body): \(shown)")
        }
        XCTAssertEqual(try h.journal.stateEntries(), [])
    }
}
