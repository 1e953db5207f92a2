import HubClient
import DispatchClient
import Foundation
import HTTPKit
import HubSandbox
import ScriptHost
import XCTest
@testable import HubBindings

/// The `dispatch` module through `HubRecipeRun.execute`: a send is a write of the run
/// (journal, plan, apply, resume, limits, `--json` events), gated by `dispatch.send`,
/// against an in-process sandbox Dispatch (`StoredDispatchSandbox`).
final class DispatchPluginTests: XCTestCase {
    /// The sandbox Dispatch of a test, with a hook on each request (count, lose).
    final class Relay: @unchecked Sendable {
        let store: StoredDispatchSandbox
        private let lock = NSLock()
        private var _requests = 0
        /// Whether to drop the response of request number n (from 1), after it was accepted.
        var lose: @Sendable (Int) -> Bool = { _ in false }

        init() throws { store = try StoredDispatchSandbox(storage: .memory) }

        var requests: Int { lock.withLock { _requests } }
        var sent: [SentNotification] { (try? store.sentNotifications()) ?? [] }

        var target: DispatchTarget {
            DispatchTarget(profile: "jobs", endpoint: .sandbox { [self] in
                ({ request in
                    let n = self.lock.withLock { self._requests += 1; return self._requests }
                    var response = self.store.handle(request)
                    if self.lose(n) { response.dropped = true }
                    return response
                }, DispatchOptions.sandboxMachineToken)
            })
        }
    }

    static let token = "dsp_live_0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f"

    /// A `vault.secret(name)` for tests: returns a secret handle (the vault plugin is not here).
    static let vault = Plugin(module: "vault", functions: [
        ScriptFunction("secret") { call in .value(.handle(ScriptHandle(kind: ScriptHandle.secretKind, name: try call.string(1)))) },
    ])

    func recipe(_ h: GatingTests.Harness, needs: [String] = ["dispatch.send"], limits: String = "", _ body: String) throws -> PreparedRecipe {
        let list = needs.map { "\"\($0)\"" }.joined(separator: ", ")
        return try h.recipe("notify.lua", """
            recipe { name = "notify", version = "1.0.0", needs = { \(list) }\(limits.isEmpty ? "" : ", limits = { \(limits) }") }
            \(body)
            """)
    }

    func execute(_ h: GatingTests.Harness, _ prepared: PreparedRecipe, relay: Relay, output: MemoryOutput = MemoryOutput(),
                 configure: (inout HubRunRequest) -> Void = { _ in }) throws -> HubRunOutcome {
        try h.execute(prepared, try h.jobs, output: output) { request in
            request.dispatch = relay.target
            request.extraPlugins = { _ in [Self.vault] }
            configure(&request)
        }
    }

    static let three = """
        for i = 1, 3 do
          local r = dispatch.send{ title = "Alert " .. i, body = "Something happened (" .. i .. ")." }
          print(i, r.accepted_devices, r.replayed, r.planned)
        end
        """

    // MARK: Writes

    func testEachSendIsAJournalledWriteWithItsKeyAndResult() throws {
        let h = try GatingTests.Harness()
        let relay = try Relay()
        let output = MemoryOutput()
        let outcome = try execute(h, try recipe(h, Self.three), relay: relay, output: output)
        XCTAssertEqual(outcome.exitCode, 0, "\(String(describing: outcome.failure))")
        XCTAssertEqual(output.lines, ["1\t1\tfalse\tnil", "2\t1\tfalse\tnil", "3\t1\tfalse\tnil"])
        let writes = try h.journal.writes(runID: outcome.runID)
        XCTAssertEqual(writes.map(\.state), [.done, .done, .done])
        XCTAssertEqual(writes.map(\.path), Array(repeating: "/dispatch/v1/notifications", count: 3))
        XCTAssertEqual(writes.map(\.method), ["POST", "POST", "POST"])
        XCTAssertEqual(relay.sent.map(\.idempotencyKey), writes.map(\.key))
        XCTAssertEqual(relay.sent.map(\.title), ["Alert 1", "Alert 2", "Alert 3"])
        XCTAssertTrue(writes.allSatisfy { $0.key.hasPrefix(IdempotencyKey.prefix) })
        XCTAssertEqual([outcome.counts.writes, outcome.counts.replayed], [3, 0])
        let events = output.events.filter { $0.type == "write" }
        XCTAssertEqual(events.count, 3)
        XCTAssertEqual(events.first?.fields["summary"], "notify \"Alert 1\"")
        XCTAssertEqual(events.first?.fields["path"], "/dispatch/v1/notifications")
        XCTAssertEqual(events.map { $0.fields["key"] }, writes.map { .string($0.key) })
    }

    func testTheResultAndAnExplicitKey() throws {
        let h = try GatingTests.Harness()
        let relay = try Relay()
        let output = MemoryOutput()
        let outcome = try execute(h, try recipe(h, """
            local a = dispatch.send{ title = "t", body = "b", key = "evt_1" }
            local b = dispatch.send{ title = "t", body = "b", key = "evt_1" }
            print(type(a.id), a.id == b.id, a.accepted_devices, a.replayed, b.replayed)
            """), relay: relay, output: output)
        // The second send reuses the key for the same notification: the journal answers it.
        XCTAssertEqual(outcome.exitCode, 0, "\(String(describing: outcome.failure))")
        XCTAssertEqual(output.lines, ["string\ttrue\t1\tfalse\ttrue"])
        XCTAssertEqual(relay.sent.map(\.idempotencyKey), ["evt_1"])
        XCTAssertEqual(relay.requests, 1)
    }

    func testPlanRecordsAndSendsNothingThenApplyFollowsThePlan() throws {
        let h = try GatingTests.Harness()
        let relay = try Relay()
        let prepared = try recipe(h, Self.three)
        let output = MemoryOutput()
        let planned = try execute(h, prepared, relay: relay, output: output) { $0.mode = .plan }
        XCTAssertEqual(planned.exitCode, 0, "\(String(describing: planned.failure))")
        XCTAssertEqual(output.lines, ["1\t0\tfalse\ttrue", "2\t0\tfalse\ttrue", "3\t0\tfalse\ttrue"])
        let plan = try XCTUnwrap(planned.plan)
        XCTAssertEqual(plan.writes.map(\.path), Array(repeating: "/dispatch/v1/notifications", count: 3))
        XCTAssertEqual(plan.writes.map(\.summary), ["notify \"Alert 1\"", "notify \"Alert 2\"", "notify \"Alert 3\""])
        XCTAssertEqual(plan.writes[0].body, ["title": "Alert 1", "body": "Something happened (1)."])
        XCTAssertEqual(relay.requests, 0, "plan mode sends nothing")

        let applied = try execute(h, prepared, relay: relay) { $0.mode = .apply(plan) }
        XCTAssertEqual(applied.exitCode, 0, "\(String(describing: applied.failure))")
        XCTAssertEqual(relay.sent.map(\.idempotencyKey), plan.writes.map(\.key))
    }

    /// A send whose response never arrives stays pending; the resume replays the done
    /// sends from the journal without sending them, resends the pending one with its key,
    /// and the Dispatch replays it: three notifications in all.
    func testAResumeReplaysDoneSendsAndResendsThePendingOneOnce() throws {
        let h = try GatingTests.Harness()
        let relay = try Relay()
        relay.lose = { $0 >= 3 }   // the third send's answers (every attempt) are lost
        let prepared = try recipe(h, Self.three)
        let first = try execute(h, prepared, relay: relay) { $0.runID = "run_resume" }
        XCTAssertEqual(first.exitCode, 1)
        XCTAssertEqual(first.failure.flatMap { $0.structured?["code"] }, "transport_error")
        XCTAssertEqual(try h.journal.writes(runID: "run_resume").map(\.state), [.done, .done, .pending])
        XCTAssertEqual(relay.sent.count, 3, "the third was accepted; only its answers were lost")
        let attemptsSoFar = relay.requests

        relay.lose = { _ in false }
        let output = MemoryOutput()
        let resumed = try execute(h, prepared, relay: relay, output: output) { $0.runID = "run_resume" }
        XCTAssertEqual(resumed.exitCode, 0, "\(String(describing: resumed.failure))")
        XCTAssertEqual(output.lines, ["1\t1\ttrue\tnil", "2\t1\ttrue\tnil", "3\t1\ttrue\tnil"])
        XCTAssertEqual(relay.requests, attemptsSoFar + 1, "only the pending send went out again")
        XCTAssertEqual([resumed.counts.writes, resumed.counts.replayed], [1, 2])
        XCTAssertEqual(try h.journal.writes(runID: "run_resume").map(\.state), [.done, .done, .done])
        let keys = relay.sent.compactMap(\.idempotencyKey)
        XCTAssertEqual(keys.count, 3)
        XCTAssertEqual(Set(keys).count, 3, "each notification once")
    }

    func testSendsCountAgainstTheWriteLimits() throws {
        let h = try GatingTests.Harness()
        let relay = try Relay()
        let limited = try execute(h, try recipe(h, limits: "writes = 2", Self.three), relay: relay)
        XCTAssertEqual(limited.exitCode, 4)
        XCTAssertTrue(limited.failure?.message.contains("limits.writes") == true || limited.failure?.message.contains("write limit") == true,
                      limited.failure?.message ?? "")
        XCTAssertEqual(relay.sent.count, 2)

        let relay2 = try Relay()
        let capped = try execute(h, try recipe(h, Self.three), relay: relay2) { $0.maxWrites = 1 }
        XCTAssertEqual(capped.exitCode, 4)
        XCTAssertEqual(relay2.sent.count, 1)
    }

    // MARK: Refusals

    func testAnUndeclaredCapabilityIsRefused() throws {
        let h = try GatingTests.Harness()
        let relay = try Relay()
        let output = MemoryOutput()
        let outcome = try execute(h, try recipe(h, needs: [], """
            local ok, err = pcall(dispatch.send, { title = "t", body = "b" })
            print(ok, err.code, err.permission, err.message)
            local ok2, err2 = pcall(dispatch.connect, { url = "https://dispatch.example.com", token = vault.secret("x") })
            print(ok2, err2.code)
            """), relay: relay, output: output)
        XCTAssertEqual(outcome.exitCode, 0, "\(String(describing: outcome.failure))")
        XCTAssertEqual(output.lines, [
            "false\tpermission_not_declared\tdispatch.send\tdispatch.send needs 'dispatch.send', which this recipe's manifest does not declare; add \"dispatch.send\" to needs",
            "false\tpermission_not_declared",
        ])
        XCTAssertEqual(relay.requests, 0)
    }

    /// `dispatch.send` is local: a profile whose key holds no Hub permission still runs a
    /// recipe that only notifies, and the Hub is asked only about the Hub's permissions.
    func testTheLocalPermissionIsNotAskedOfTheHub() throws {
        let h = try GatingTests.Harness()
        let relay = try Relay()
        let support = try h.connection(key: SandboxFixtures.supportKeySecret, profile: "support", keyID: SandboxFixtures.supportKeyId)
        let prepared = try recipe(h, "dispatch.send{ title = 't', body = 'b' }")
        let outcome = try h.execute(prepared, support) { $0.dispatch = relay.target }
        XCTAssertEqual(outcome.exitCode, 0)
        XCTAssertEqual(relay.sent.count, 1)
        let both = try recipe(h, needs: ["dispatch.send", "users.manage"], "print('ran')")
        XCTAssertThrowsError(try h.execute(both, support) { $0.dispatch = relay.target }) { error in
            XCTAssertEqual((error as? HubGate.Denied)?.missing, ["users.manage"])
        }
        XCTAssertEqual(HubGate.unknownPermissions(in: ["dispatch.send", "dispatch.sned"]).map(\.name), ["dispatch.sned"])
    }

    func testInvalidNotificationsAreRefusedBeforeAnythingIsJournalled() throws {
        let h = try GatingTests.Harness()
        let relay = try Relay()
        let output = MemoryOutput()
        let outcome = try execute(h, try recipe(h, """
            local ok, err = pcall(dispatch.send, { title = string.rep("é", 101), body = "b" })
            print(err.code, err.details.field, err.message)
            ok, err = pcall(dispatch.send, { title = "t", body = "" })
            print(err.code, err.details.field)
            print(pcall(dispatch.send, { title = "t" }))
            print(pcall(dispatch.send, { title = "t", body = "b", urgent = true }))
            print(pcall(dispatch.send, "t"))
            print(#(string.rep("é", 100)), pcall(dispatch.send, { title = string.rep("é", 100), body = "b" }) and "sent")
            """), relay: relay, output: output)
        XCTAssertEqual(outcome.exitCode, 0, "\(String(describing: outcome.failure))")
        XCTAssertEqual(output.lines, [
            "invalid_title\ttitle\ttitle must be 1–100 characters (got 101)",
            "invalid_body\tbody",
            "false\tbad argument #1 to 'dispatch.send' (body is required)",
            "false\tbad argument #1 to 'dispatch.send' (unknown field 'urgent' (fields: title, body, key))",
            "false\tbad argument #1 to 'dispatch.send' (table expected, got string)",
            "200\tsent",
        ])
        XCTAssertEqual(try h.journal.writes(runID: outcome.runID).count, 1)
        XCTAssertEqual(relay.sent.count, 1)
    }

    /// Uncaught, an error names the recipe's line, through the module's Lua wrapper too.
    func testErrorsPointAtTheRecipesLine() throws {
        let h = try GatingTests.Harness()
        let relay = try Relay()
        let direct = try execute(h, try recipe(h, "\n\ndispatch.send{ title = 't' }\n"), relay: relay)
        XCTAssertTrue(direct.failure?.message.hasSuffix("/notify.lua:4: bad argument #1 to 'dispatch.send' (body is required)") == true,
                      direct.failure?.message ?? "")
        let wrapped = try execute(h, try recipe(h, """
            local conn = dispatch.connect{ url = "https://dispatch.example.com", token = vault.secret("dispatch/ci") }
            conn:send{ title = "t" }
            """), relay: relay) { $0.secrets = FixedSecrets(["dispatch/ci": Self.token]) }
        XCTAssertTrue(wrapped.failure?.message.hasSuffix("/notify.lua:3: bad argument #1 to 'conn:send' (body is required)") == true,
                      wrapped.failure?.message ?? "")
        XCTAssertEqual(relay.requests, 0)
    }

    func testWithoutADispatchTheSendSaysWhatToConfigure() throws {
        let h = try GatingTests.Harness()
        let relay = try Relay()
        let output = MemoryOutput()
        let outcome = try execute(h, try recipe(h, """
            local ok, err = pcall(dispatch.send, { title = "t", body = "b" })
            print(err.code, err.message)
            """), relay: relay, output: output) {
            $0.dispatch = DispatchTarget.forProfile("prod", .hub(HubProfile(name: "prod", hubURL: URL(string: "https://hub.example.com")!,
                                                                         auth: .apiKey(.literal("k")))), sandbox: { throw PlanError(.io, "no sandbox") })
        }
        XCTAssertEqual(outcome.exitCode, 0)
        XCTAssertEqual(output.lines, ["dispatch_not_configured\tprofile 'prod' has no Dispatch: set dispatch_url and dispatch_token_ref in its configuration, or use dispatch.connect{url = …, token = vault.secret(…)}"])
        XCTAssertEqual(try h.journal.writes(runID: outcome.runID).count, 0)
    }

    func testAProfileTokenInTheVaultNeedsAnOpenVault() throws {
        let h = try GatingTests.Harness()
        let relay = try Relay()
        let profile = DispatchTarget.forProfile("prod", .hub(HubProfile(
            name: "prod", hubURL: URL(string: "https://hub.example.com")!, auth: .apiKey(.literal("k")),
            dispatchURL: URL(string: "https://dispatch.example.com")!, dispatchTokenRef: "dispatch/ci")), sandbox: { throw PlanError(.io, "no sandbox") })
        let output = MemoryOutput()
        _ = try execute(h, try recipe(h, """
            local ok, err = pcall(dispatch.send, { title = "t", body = "b" })
            print(err.code, err.message)
            """), relay: relay, output: output) { $0.dispatch = profile }
        XCTAssertEqual(output.lines, ["vault_not_open\tno vault is open: profile 'prod' keeps its Dispatch token in the vault entry 'dispatch/ci' (dispatch_token_ref), which cannot be read without it"])
    }

    // MARK: dispatch.connect

    /// A Dispatch served over loopback HTTP (the live transport's path).
    final class Served {
        let relay: StoredDispatchSandbox
        let server: HTTPServer
        var url: String { "http://127.0.0.1:\(server.port)" }

        init() throws {
            let relay = try StoredDispatchSandbox(storage: .memory, options: DispatchOptions(machineTokens: [DispatchPluginTests.token: "ci-runner"]))
            self.relay = relay
            server = try HTTPServer(port: 0, handler: { relay.handle($0) })
            server.start()
        }

        deinit { server.stop() }
    }

    func testConnectTakesOnlyASecretHandle() throws {
        let h = try GatingTests.Harness()
        let relay = try Relay()
        let output = MemoryOutput()
        let outcome = try execute(h, try recipe(h, """
            print(pcall(dispatch.connect, { url = "https://dispatch.example.com", token = "dsp_live_plain" }))
            print(pcall(dispatch.connect, { url = "https://dispatch.example.com" }))
            local ok, err = pcall(dispatch.connect, { url = "http://dispatch.example.com", token = vault.secret("dispatch/ci") })
            print(err.code)
            ok, err = pcall(dispatch.connect, { url = "https://dispatch.example.com", token = vault.secret("dispatch/ci") })
            print(err.code, err.message)
            """), relay: relay, output: output)
        XCTAssertEqual(outcome.exitCode, 0, "\(String(describing: outcome.failure))")
        XCTAssertEqual(output.lines, [
            "false\tbad argument #1 to 'dispatch.connect' (token must be a secret handle: token = vault.secret(\"NAME\"); a token written in a recipe or a param would be readable by anyone who can read those)",
            "false\tbad argument #1 to 'dispatch.connect' (token is required: token = vault.secret(\"NAME\"))",
            "insecure_transport",
            "vault_not_open\tno vault is open: dispatch.connect needs the vault entry 'dispatch/ci', which cannot be read without it",
        ])
    }

    func testAConnectionSendsThroughItsOwnDispatchAsAWrite() throws {
        let h = try GatingTests.Harness()
        let relay = try Relay()
        let served = try Served()
        let output = MemoryOutput()
        let outcome = try execute(h, try recipe(h, """
            local conn = dispatch.connect{ url = "\(served.url)", token = vault.secret("dispatch/ci") }
            print(tostring(conn), conn.url)
            local r = conn:send{ title = "Deploy", body = "v2 is live" }
            print(r.accepted_devices, r.replayed)
            print(pcall(conn.send, { title = "x", body = "y" }))
            local bad = dispatch.connect{ url = "\(served.url)", token = vault.secret("dispatch/wrong") }
            local ok, err = pcall(bad.send, bad, { title = "x", body = "y" })
            print(err.code, err.status, err.message)
            """), relay: relay, output: output) {
            $0.secrets = FixedSecrets(["dispatch/ci": Self.token, "dispatch/wrong": "dsp_live_not_this_one"])
        }
        XCTAssertEqual(outcome.exitCode, 0, "\(String(describing: outcome.failure))")
        XCTAssertEqual(output.lines, [
            "<dispatch connection \(served.url)>\t\(served.url)",
            "1\tfalse",
            "false\tuse conn:send{ … } (a colon, not a dot)",
            "unauthorized\t401\tthe Dispatch token was refused: \(served.url) does not accept the machine token from the vault entry 'dispatch/wrong'",
        ])
        let sent = try served.relay.sentNotifications()
        XCTAssertEqual(sent.map(\.machine), ["ci-runner"])
        XCTAssertEqual(relay.requests, 0, "the profile's Dispatch was not used")
        let writes = try h.journal.writes(runID: outcome.runID)
        let port = URL(string: served.url)!.port!
        XCTAssertEqual(writes.map(\.path), Array(repeating: "/dispatch/127.0.0.1:\(port)/v1/notifications", count: 2))
        XCTAssertEqual(writes.map(\.state), [.done, .failed], "a refused send is journalled failed")
        XCTAssertEqual(sent.map(\.idempotencyKey), [writes[0].key])
        let failed = output.events.filter { $0.type == "write_failed" }
        XCTAssertEqual(failed.map { $0.fields["code"] }, ["unauthorized"])
        XCTAssertEqual(failed.map { $0.fields["status"] }, [.integer(401)])
        for line in output.lines + output.events.map({ "\($0.fields)" }) {
            XCTAssertFalse(line.contains(Self.token) || line.contains("dsp_live_not_this_one"), "a token leaked: \(line)")
        }
    }
}
