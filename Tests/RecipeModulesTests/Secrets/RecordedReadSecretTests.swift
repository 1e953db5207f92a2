import Foundation
import HTTPKit
import HubSandbox
import ScriptHost
import XCTest
@testable import Runs
@testable import RunJournal

/// A resume replays the Hub reads its earlier passes recorded, but never an answer that
/// held a loaded secret's text: the record keeps answers masked, so a replayed copy would
/// tell the recipe that text it read was the secret. Such an answer is not recorded, nor
/// is any later read of that pass; a resume reads them live and sees what the Hub says.
final class RecordedReadSecretTests: XCTestCase {
    typealias Harness = GatingTests.Harness
    static let secret = SecretOracleTests.secret

    /// Sets usr_ada's display name on the sandbox directly (not through a recipe, whose
    /// write would be answered with the secret and stop the run).
    func setAdaName(_ h: Harness, _ name: String) throws {
        var headers = HTTPHeaders()
        headers.add("Substratal-Version", "1")
        headers.add("Authorization", "Bearer \(SandboxFixtures.jobsKeySecret)")
        headers.add("Content-Type", "application/json")
        headers.add("Idempotency-Key", UUID().uuidString)
        let body = try JSONSerialization.data(withJSONObject: ["display_name": name])
        let r = h.sandbox.handle(HTTPRequestMessage(method: "PATCH", target: "/users/usr_ada", headers: headers, body: body))
        XCTAssertEqual(r.status, 200, String(decoding: r.body, as: UTF8.self))
    }

    /// Runs `read` (which prints what it saw) then one write, then fails, so the run can be resumed.
    func run(_ h: Harness, _ read: String, runID: String, output: MemoryOutput) throws -> HubRunOutcome {
        let source = """
            recipe { name = "echo-read", needs = { "users.list", "users.manage" }, secrets = { "oracle/pin" },
                     params = { v = { type = "string", default = "" } } }
            local plain = hub.users.get("usr_support")
            \(read)
            hub.users.suspend("usr_support", { reason = "test" })
            error("stop after the write")
            """
        let prepared = try h.recipe("echo-read.lua", source, params: [("v", Self.secret)])
        return try h.execute(prepared, try h.jobs, output: output) {
            $0.secrets = SecretOracleTests.secrets
            $0.runID = runID
        }
    }

    static func warning(_ path: String) -> String {
        "a Hub read (GET \(path)) was answered with the text of the secret 'oracle/pin'; it is not recorded (a resume "
            + "would be handed it masked), nor is any later read of this pass, so a resume of this run reads them live "
            + "and may decide differently from this pass"
    }

    /// A body, a list page and a definite error that hold the secret's text: the resume
    /// sees exactly what the first pass saw, never a mask.
    func testAnAnswerHoldingASecretIsNotRecordedAndTheResumeReadsItLive() throws {
        // `recorded`: the reads made before the one holding the secret (usr_ada is on the
        // users list's second page).
        let cases: [(name: String, read: String, path: String, recorded: [String])] = [
            ("body", """
                local u = hub.users.get("usr_ada")
                print(u.display_name == "Ada " .. params.v, u.display_name:find("<secret", 1, true) == nil)
                """, "/users/usr_ada", ["/users/usr_support"]),
            ("page", """
                for u in hub.users.list {} do
                  if u.id == "usr_ada" then print(u.display_name == "Ada " .. params.v, u.display_name:find("<secret", 1, true) == nil) end
                end
                """, "/users", ["/users/usr_support", "/users"]),
            ("error", """
                local ok, err = pcall(hub.users.get, "usr_" .. params.v)
                print(ok, err.message:find(params.v, 1, true) ~= nil, err.message:find("<secret", 1, true) == nil)
                """, "/users/usr_\(Self.secret)", ["/users/usr_support"]),
        ]
        for c in cases {
            let h = try Harness()
            try setAdaName(h, "Ada " + Self.secret)
            let runID = "run_echo_read_\(c.name)"
            let first = MemoryOutput()
            let outcome = try run(h, c.read, runID: runID, output: first)
            XCTAssertEqual(outcome.exitCode, 1, "\(c.name): \(String(describing: outcome.failure))")
            let expected = c.name == "error" ? ["false\ttrue\ttrue"] : ["true\ttrue"]
            XCTAssertEqual(first.lines, expected, c.name)
            XCTAssertEqual(first.logs.filter { $0.level == .warn }.map(\.message), [Self.warning(c.path)], c.name)
            // Only the reads before it are recorded; nothing masked is kept.
            let recorded = try h.journal.reading { db in
                var rows: [(String, String)] = []
                try db.query("SELECT path, response FROM reads WHERE run_id = ?1 ORDER BY seq", [.text(runID)]) {
                    rows.append(($0.text(0), $0.text(1)))
                }
                return rows
            }
            XCTAssertEqual(recorded.map(\.0), c.recorded, c.name)
            XCTAssertFalse(recorded.contains { $0.1.contains("<secret") }, c.name)

            let second = MemoryOutput()
            let resumed = try run(h, c.read, runID: runID, output: second)
            XCTAssertEqual(resumed.exitCode, 1, "\(c.name): \(String(describing: resumed.failure))")
            XCTAssertEqual(second.lines, expected, "\(c.name): the resume sees the Hub's answer, not a mask")
            XCTAssertEqual(resumed.counts.readsReplayed, c.recorded.count, c.name)
            XCTAssertEqual(resumed.counts.replayed, 1, "\(c.name): the write is answered from the journal")
            XCTAssertEqual(resumed.counts.writes, 0, c.name)
        }
    }
}
