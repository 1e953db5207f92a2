import Foundation
import ScriptHost
import Secrets
import SystemText
import XCTest
@testable import Runs
@testable import RunJournal

/// Each run masks with a redactor made for it, whose parent is the redactor of its
/// process, handed down in `HubRunRequest.processRedactor`: a secret one run loads is
/// masked in what every run of that process writes to the journal, while the run's own
/// files are masked with its own secrets.
final class RunRedactorTests: XCTestCase {
    typealias Harness = GatingTests.Harness
    static let secret = "ops-token-7f3a9c21d"

    func loadingRun(_ h: Harness, process: SecretRedactor) throws -> HubRunOutcome {
        let prepared = try h.recipe("loads.lua", """
            recipe { name = "loads", secrets = { "ops/token" } }
            local token = vault.secret("ops/token")
            print("loaded")
            """)
        return try h.execute(prepared, try h.jobs) {
            $0.secrets = FixedSecrets(["ops/token": Self.secret])
            $0.processRedactor = process
        }
    }

    /// A run that never loads the secret, given its text as a param (which the journal keeps).
    func echoingRun(_ h: Harness, process: SecretRedactor) throws -> HubRunOutcome {
        let prepared = try h.recipe("echoes.lua", """
            recipe { name = "echoes", params = { v = { type = "string" } } }
            print("echoed")
            """, params: [("v", "token " + Self.secret)])
        return try h.execute(prepared, try h.jobs) { $0.processRedactor = process }
    }

    func testASecretOneRunLoadsIsMaskedInTheJournalRowsOfTheOtherRunsOfItsProcess() throws {
        let h = try Harness()
        let process = SecretRedactor()
        let loader = try loadingRun(h, process: process)
        XCTAssertNil(loader.failure, loader.failure?.message ?? "")
        XCTAssertEqual(process.redact("a " + Self.secret), "a <secret ops/token>", "the run registered into its process's redactor")
        XCTAssertEqual(loader.masking.redact(Self.secret), "<secret ops/token>")

        let other = try echoingRun(h, process: process)
        XCTAssertNil(other.failure, other.failure?.message ?? "")
        let params = try XCTUnwrap(h.journal.run(id: other.runID)).paramsJSON
        XCTAssertEqual(params, #"{"v":"token <secret ops/token>"}"#)
        // The other run's own redactor holds none of the first run's secrets.
        XCTAssertFalse(other.masking.isActive)
        XCTAssertEqual(other.masking.redact(Self.secret), Self.secret)
    }

    /// What masks a run's journal rows is the redactor its process hands down, not one
    /// the whole test process shares: a run of another process (another redactor) that
    /// never loaded the secret has nothing to mask it with.
    func testTheJournalIsMaskedWithTheRedactorHandedDown() throws {
        let h = try Harness()
        let loader = try loadingRun(h, process: SecretRedactor())
        XCTAssertNil(loader.failure, loader.failure?.message ?? "")
        let elsewhere = try echoingRun(h, process: SecretRedactor())
        XCTAssertNil(elsewhere.failure, elsewhere.failure?.message ?? "")
        XCTAssertEqual(try XCTUnwrap(h.journal.run(id: elsewhere.runID)).paramsJSON, #"{"v":"token \#(Self.secret)"}"#)
    }

    /// A run's plan file (which keeps the params) is masked with that run's secrets.
    func testAPlanFileIsMaskedWithItsRunsSecrets() throws {
        let h = try Harness()
        let process = SecretRedactor()
        let prepared = try h.recipe("plans.lua", """
            recipe { name = "plans", needs = { "users.manage" }, secrets = { "ops/token" },
                     params = { v = { type = "string" } } }
            local token = vault.secret("ops/token")
            hub.users.suspend("usr_support", { reason = "test" })
            """, params: [("v", "because " + Self.secret)])
        let outcome = try h.execute(prepared, try h.jobs) {
            $0.secrets = FixedSecrets(["ops/token": Self.secret])
            $0.processRedactor = process
            $0.mode = .plan
        }
        XCTAssertNil(outcome.failure, outcome.failure?.message ?? "")
        let plan = try XCTUnwrap(outcome.plan)
        let url = h.root.appendingPathComponent("plan.json")
        try plan.save(to: url, masking: outcome.masking)
        let text = try String(contentsOf: url, encoding: .utf8)
        XCTAssertFalse(text.contains(Self.secret), text)
        XCTAssertTrue(text.contains("<secret ops/token>"), text)
    }

    /// The run's view of its resolver registers what it reads or stores in the run's
    /// redactor (and its parent), and is a store only when the resolver is one.
    func testTheRunsResolverRegistersWhatPassesThroughIt() throws {
        let process = SecretRedactor()
        let run = SecretRedactor(parent: process)
        let fixed = RegisteringSecrets(FixedSecrets(["ops/token": Self.secret]), into: run)
        XCTAssertNil(fixed.asStore)
        XCTAssertEqual(try fixed.value(of: "ops/token"), Self.secret)
        XCTAssertEqual(run.redact(Self.secret), "<secret ops/token>")
        XCTAssertEqual(process.redact(Self.secret), "<secret ops/token>")

        let memory = MemorySecrets()
        let store = try XCTUnwrap(RegisteringSecrets(memory, into: run).asStore)
        try store.store("satk_new_key_secret_0042", as: "hub/keys/ci")
        XCTAssertEqual(run.redact("satk_new_key_secret_0042"), "<secret hub/keys/ci>")
        XCTAssertEqual(try memory.value(of: "hub/keys/ci"), "satk_new_key_secret_0042")
        XCTAssertThrowsError(try fixed.value(of: "ops/missing")) { error in
            XCTAssertEqual((error as? ScriptStructuredError)?.code, "secret_not_found")
        }
    }
}
