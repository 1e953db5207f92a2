import Foundation
import HubSandbox
import ScriptHost
import XCTest
@testable import Secrets
@testable import Runs

/// Masked text never flows back into Lua. A checkpoint or a journalled answer is kept
/// masked; handed back, the mask would tell a recipe that text it chose was a secret, and
/// a recipe trying guesses would learn the secret. So a checkpoint holding a secret's
/// text is never stored, and a write answered with one is never journalled: the run stops
/// there (a limit error `pcall` cannot catch, naming the secret), and every value a
/// recipe reads back is exactly what it stored.
final class SecretOracleTests: XCTestCase {
    typealias Harness = GatingTests.Harness
    static let secret = "pin-Or4cle-93"
    static let secrets = FixedSecrets(["oracle/pin": secret])

    func run(_ h: Harness, _ body: String, params: [(String, String)] = [], output: MemoryOutput = MemoryOutput(),
             configure: (inout HubRunRequest) -> Void = { _ in }) throws -> HubRunOutcome {
        let source = """
            recipe { name = "oracle", needs = { "users.manage" }, secrets = { "oracle/pin" },
                     params = { v = { type = "string", default = "" }, shape = { type = "string", default = "" } } }
            \(body)
            """
        let connection = try h.connection(key: SandboxFixtures.jobsKeySecret, profile: "jobs", keyID: SandboxFixtures.jobsKeyId)
        return try h.execute(try h.recipe("oracle.lua", source, params: params), connection, output: output) {
            $0.secrets = Self.secrets
            configure(&$0)
        }
    }

    static func refusal(_ key: String) -> String {
        "limit exceeded: state.set(\"\(key)\", …): the value holds the text of the secret 'oracle/pin'; a checkpoint never keeps a secret (read back masked, it would tell the recipe what the secret is), so the run stops here and nothing is stored. Keep secrets out of state values"
    }

    /// Guesses are stored and read back exactly, until one is the secret: then the run
    /// stops, though the recipe wrapped the call in `pcall`, and nothing of it is stored.
    func testGuessingThroughACheckpointStopsAtTheSecretAndNeverSeesAMask() throws {
        let h = try Harness()
        let output = MemoryOutput()
        let outcome = try run(h, """
            for i = 90, 95 do
              local guess = "pin-Or4cle-" .. i
              local ok = pcall(state.set, "guess", { text = "x" .. guess .. "y" })
              local back = state.get("guess")
              print(i, ok, back.text == "x" .. guess .. "y")
            end
            print("after")
            """, output: output)
        XCTAssertEqual(outcome.exitCode, 4, "\(String(describing: outcome.failure))")
        XCTAssertEqual(outcome.failure?.message, Self.refusal("guess"))
        XCTAssertEqual(output.lines, ["90\ttrue\ttrue", "91\ttrue\ttrue", "92\ttrue\ttrue"])
        XCTAssertEqual(try h.journal.stateEntries().map(\.valueJSON), [#"{"text":"xpin-Or4cle-92y"}"#])
    }

    /// Wherever the secret sits in the value — a string, a key, deep down, a list — the
    /// value is refused.
    func testASecretAnywhereInTheValueIsRefused() throws {
        let h = try Harness()
        let shapes: [(String, String)] = [
            ("plain", "params.v"), ("inside", #""before " .. params.v .. " after""#), ("key", "{ [params.v] = 1 }"),
            ("deep", "{ a = { b = { c = { params.v } } } }"), ("list", #"{ "x", "y", params.v }"#),
        ]
        for (name, expression) in shapes {
            let outcome = try run(h, "state.set(\"\(name)\", \(expression)) print('stored')", params: [("v", Self.secret)])
            XCTAssertEqual(outcome.exitCode, 4, name)
            XCTAssertEqual(outcome.failure?.message, Self.refusal(name), name)
        }
        XCTAssertEqual(try h.journal.stateEntries(), [], "nothing was stored")
        // A value near the secret is stored and read back as it was.
        let output = MemoryOutput()
        let near = String(Self.secret.dropLast())
        let kept = try run(h, #"state.set("near", params.v) print(state.get("near") == params.v)"#, params: [("v", near)], output: output)
        XCTAssertEqual(kept.exitCode, 0, "\(String(describing: kept.failure))")
        XCTAssertEqual(output.lines, ["true"])
    }

    /// A write answered with a secret's text (the Hub echoes what the recipe sent) stops
    /// the run with the write pending, so no pass — this one, or a resumed one answered
    /// from the journal — is handed the answer, masked or not. The resume resends it
    /// under the same key and stops again.
    func testAWriteAnsweredWithASecretStopsTheRunWithTheWritePending() throws {
        let h = try Harness()
        let body = #"local u = hub.users.update("usr_ada", { display_name = params.v }) print(u.display_name)"#
        let output = MemoryOutput()
        let outcome = try run(h, body, params: [("v", "Ada " + Self.secret)], output: output) { $0.runID = "run_echo" }
        XCTAssertEqual(outcome.exitCode, 4, "\(String(describing: outcome.failure))")
        let message = "limit exceeded: write 1 (PATCH /users/usr_ada) was answered with the text of the secret 'oracle/pin'; a recipe is never handed a secret, nor an answer that would be masked only on resume, so the run stops here with the write pending (a resume resends it under the same key). Check what the recipe sent: the server echoed a secret's value"
        XCTAssertEqual(outcome.failure?.message, message)
        XCTAssertEqual(output.lines, [])
        XCTAssertEqual(try h.journal.writes(runID: "run_echo").map(\.state), [.pending])
        let resumed = try run(h, body, params: [("v", "Ada " + Self.secret)]) { $0.runID = "run_echo" }
        XCTAssertEqual(resumed.failure?.message, message)
        XCTAssertEqual(try h.journal.writes(runID: "run_echo").map(\.state), [.pending])
        // An answer without the secret is journalled and replayed as it came.
        let plain = MemoryOutput()
        XCTAssertEqual(try run(h, body, params: [("v", "Ada L.")], output: plain).exitCode, 0)
        XCTAssertEqual(plain.lines, ["Ada L."])
    }

    /// A plan keeps bodies masked, so a write whose body holds a secret's text cannot
    /// be planned (its apply would always diverge, telling the recipe what it sent):
    /// planning stops there, with nothing in the plan.
    func testAWriteWhoseBodyHoldsASecretIsNotPlanned() throws {
        let h = try Harness()
        let body = #"hub.users.update("usr_ada", { display_name = params.v }) print("planned")"#
        let outcome = try run(h, body, params: [("v", "Ada " + Self.secret)]) { $0.mode = .plan }
        XCTAssertEqual(outcome.exitCode, 4, "\(String(describing: outcome.failure))")
        XCTAssertEqual(outcome.failure?.message, "limit exceeded: plan: write 1 (PATCH /users/usr_ada) would send the text of the secret 'oracle/pin'; a plan file never keeps a secret, and a plan that masked it could not be applied, so planning stops here. Run the recipe without plan and apply")
        XCTAssertEqual(outcome.plan?.writes.count ?? 0, 0)
        let plain = try run(h, body, params: [("v", "Ada L.")]) { $0.mode = .plan }
        XCTAssertEqual(plain.exitCode, 0)
        XCTAssertEqual(plain.plan?.writes.count, 1)
    }

    /// A session is never a recipe's: declaring one stops the run before it starts.
    func testARecipeCannotDeclareASession() throws {
        let h = try Harness()
        let connection = try h.connection(key: SandboxFixtures.jobsKeySecret, profile: "jobs", keyID: SandboxFixtures.jobsKeyId)
        let prepared = try h.recipe("session.lua", #"recipe { name = "session", secrets = { "sessions/me" } } print("ran")"#)
        XCTAssertThrowsError(try h.execute(prepared, connection) { $0.secrets = FixedSecrets(["sessions/me": "{\"refresh_token\":\"rt_x\"}"]) }) { error in
            XCTAssertEqual("\(error)", "the recipe declares the secret 'sessions/me', where `hubscript login` keeps a profile's session: no recipe may hold a session")
        }
    }
}
