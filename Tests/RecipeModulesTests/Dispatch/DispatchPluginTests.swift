import HubClient
import DispatchClient
import Foundation
import HTTPKit
import HubSandbox
import ScriptHost
import XCTest
@testable import Secrets
@testable import RecipeModules
@testable import Runs

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

        var target: DispatchTarget { named(nil) }

        /// This relay as the configured target `name` (nil: as the profile's Dispatch).
        func named(_ name: String?) -> DispatchTarget {
            DispatchTarget(profile: "jobs", endpoint: .sandbox { [self] in
                ({ request in
                    let n = self.lock.withLock { self._requests += 1; return self._requests }
                    var response = self.store.handle(request)
                    if self.lose(n) { response.dropped = true }
                    return response
                }, DispatchOptions.sandboxMachineToken)
            }, name: name)
        }
    }

    static let token = "dsp_live_0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f"

    /// A `vault.secret(name)` for tests: returns a secret handle (the vault plugin is not here).
    static let vault = Plugin(module: "vault", functions: [
        ScriptFunction("secret") { call in .value(.handle(ScriptHandle(kind: ScriptHandle.secretKind, name: try call.string(1)))) },
    ])

    func recipe(_ h: GatingTests.Harness, needs: [String] = ["dispatch.send"], targets: [String] = [], limits: String = "",
                _ body: String) throws -> PreparedRecipe {
        let list = needs.map { "\"\($0)\"" }.joined(separator: ", ")
        let declared = targets.isEmpty ? "" : ", targets = { " + targets.map { "\"\($0)\"" }.joined(separator: ", ") + " }"
        return try h.recipe("notify.lua", """
            recipe { name = "notify", version = "1.0.0", needs = { \(list) }\(declared)\(limits.isEmpty ? "" : ", limits = { \(limits) }") }
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
        let wrapped = try execute(h, try recipe(h, targets: ["ops"], """
            local conn = dispatch.connect("ops")
            conn:send{ title = "t" }
            """), relay: relay) { $0.dispatchTargets = ["ops": relay.named("ops")] }
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
        XCTAssertEqual(output.lines, ["dispatch_not_configured\tprofile 'prod' has no Dispatch: set dispatch_url and dispatch_token_ref in its configuration, or send through a configured target: dispatch.connect(\"NAME\") with dispatch_targets in the configuration"])
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

    static let usage = "dispatch.connect(\"NAME\") names a Dispatch target of the configuration (dispatch_targets = { NAME = { url = …, token_ref = … } }) declared in the manifest's targets"

    /// A recipe names a destination; it never gives a URL or a token, whatever form the
    /// call takes, and names only targets its manifest declares.
    func testConnectNamesADeclaredTargetNeverAURLOrAToken() throws {
        let h = try GatingTests.Harness()
        let relay = try Relay()
        let output = MemoryOutput()
        let outcome = try execute(h, try recipe(h, targets: ["ops"], """
            print(pcall(dispatch.connect, { url = "https://dispatch.example.com", token = vault.secret("dispatch/ci") }))
            print(pcall(dispatch.connect, { url = "https://dispatch.example.com" }))
            print(pcall(dispatch.connect, { token = vault.secret("dispatch/ci") }))
            print(pcall(dispatch.connect, { target = "ops", token = vault.secret("dispatch/ci") }))
            print(pcall(dispatch.connect, { target = "ops", via = "x" }))
            print(pcall(dispatch.connect, {}))
            print(pcall(dispatch.connect, vault.secret("dispatch/ci")))
            print(pcall(dispatch.connect, "https://dispatch.example.com"))
            local ok, err = pcall(dispatch.connect, "other")
            print(err.code, err.target, err.message)
            local a, b = dispatch.connect("ops"), dispatch.connect{ target = "ops" }
            print(tostring(a), a.target, a == b or rawequal(a.send, b.send) or "two objects, one connection")
            """), relay: relay, output: output) { $0.dispatchTargets = ["ops": relay.named("ops")] }
        XCTAssertEqual(outcome.exitCode, 0, "\(String(describing: outcome.failure))")
        let noURL = "false\tbad argument #1 to 'dispatch.connect' (a recipe gives no URL or token: a secret goes only where the configuration sends it; \(Self.usage))"
        XCTAssertEqual(output.lines, [
            noURL, noURL, noURL, noURL,
            "false\tbad argument #1 to 'dispatch.connect' (unknown field 'via' (fields: target))",
            "false\tbad argument #1 to 'dispatch.connect' (target is required: \(Self.usage))",
            "false\tbad argument #1 to 'dispatch.connect' (a target name expected, got userdata: \(Self.usage))",
            "false\tbad argument #1 to 'dispatch.connect' ('https://dispatch.example.com' is not a target name: \(Self.usage))",
            "target_not_declared\tother\tdispatch.connect: the target 'other' is not declared; add it to the manifest's targets = { \"other\" } (a reviewer reads there every destination a recipe can reach)",
            "<dispatch connection ops>\tops\ttwo objects, one connection",
        ])
        XCTAssertEqual(relay.requests, 0, "nothing was sent")
    }

    /// A declared target the run does not offer (the configuration lacks it) stops the
    /// run before it starts, as an undeclared permission does: nothing is journalled.
    func testADeclaredTargetTheRunDoesNotOfferStopsItBeforeItStarts() throws {
        let h = try GatingTests.Harness()
        let relay = try Relay()
        let prepared = try recipe(h, targets: ["ops", "pager"], "print('ran')")
        XCTAssertThrowsError(try execute(h, prepared, relay: relay) { $0.dispatchTargets = ["ops": relay.named("ops")] }) { error in
            XCTAssertEqual("\(error)", "the recipe sends to the Dispatch target 'pager' (targets = { \"pager\" }), which this run does not offer: define it in the configuration's dispatch_targets = { pager = { url = \"https://…\", token_ref = \"dispatch/pager\" } }")
        }
        let locked = DispatchTarget(profile: "prod", endpoint: .server(url: URL(string: "https://dispatch.example.com")!, tokenRef: "dispatch/pager"), name: "pager")
        XCTAssertThrowsError(try execute(h, prepared, relay: relay) { $0.dispatchTargets = ["ops": relay.named("ops"), "pager": locked] }) { error in
            XCTAssertEqual("\(error)", "the recipe sends to the Dispatch target 'pager', which cannot be used: vault_not_open: no vault is open: the Dispatch target 'pager' keeps its Dispatch token in the vault entry 'dispatch/pager' (token_ref), which cannot be read without it")
        }
        XCTAssertEqual(try h.journal.listRuns().count, 0, "no run was recorded")
        XCTAssertEqual(relay.requests, 0)
    }

    func testATargetSendsThroughItsConfiguredDispatchAsAWrite() throws {
        let h = try GatingTests.Harness()
        let relay = try Relay()
        let served = try Served()
        let output = MemoryOutput()
        let target = { (name: String, ref: String) in
            DispatchTarget(profile: "jobs", endpoint: .server(url: URL(string: served.url)!, tokenRef: ref), name: name)
        }
        let outcome = try execute(h, try recipe(h, targets: ["ops", "stale"], """
            local conn = dispatch.connect("ops")
            print(tostring(conn), conn.url, conn.target)
            local r = conn:send{ title = "Deploy", body = "v2 is live" }
            print(r.accepted_devices, r.replayed)
            print(pcall(conn.send, { title = "x", body = "y" }))
            local bad = dispatch.connect("stale")
            local ok, err = pcall(bad.send, bad, { title = "x", body = "y" })
            print(err.code, err.status, err.message)
            """), relay: relay, output: output) {
            $0.secrets = FixedSecrets(["dispatch/ops": Self.token, "dispatch/stale": "dsp_live_not_this_one"])
            $0.dispatchTargets = ["ops": target("ops", "dispatch/ops"), "stale": target("stale", "dispatch/stale")]
        }
        XCTAssertEqual(outcome.exitCode, 0, "\(String(describing: outcome.failure))")
        XCTAssertEqual(output.lines, [
            "<dispatch connection ops>\t\(served.url)\tops",
            "1\tfalse",
            "false\tuse conn:send{ … } (a colon, not a dot)",
            "unauthorized\t401\tthe Dispatch token was refused: \(served.url) does not accept the machine token from the vault entry 'dispatch/stale'",
        ])
        let sent = try served.relay.sentNotifications()
        XCTAssertEqual(sent.map(\.machine), ["ci-runner"])
        XCTAssertEqual(relay.requests, 0, "the profile's Dispatch was not used")
        let writes = try h.journal.writes(runID: outcome.runID)
        XCTAssertEqual(writes.map(\.path), ["/dispatch/targets/ops/v1/notifications", "/dispatch/targets/stale/v1/notifications"])
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
