import Foundation
import SystemText
import HubSandbox
import ScriptHost
import XCTest
@testable import HubClient
@testable import RecipeModules
@testable import Runs

/// An API key whose permissions are not known (neither declared nor read from its
/// record): a recipe that writes does not start, in any mode; one that only reads runs
/// with a note; `gate = "hub"` runs and the Hub's 403 is the gate, resumable.
final class UnknownPermissionsGateTests: XCTestCase {
    typealias Harness = GatingTests.Harness

    static let writingNeeds = ["users.list", "users.manage", "entitlements.manage", "api_keys.manage", "audit.view"]

    func recipe(_ h: Harness, needs: [String], body: String) throws -> PreparedRecipe {
        let list = "{ " + needs.map { "\"\($0)\"" }.joined(separator: ", ") + " }"
        return try h.recipe("gate-\(UUID().uuidString).lua", GatingTests.header.replacingOccurrences(of: "NEEDS", with: list) + body)
    }

    static func expectedDenial(profile: String, writes: String, unreadable: String? = nil) -> String {
        var text = """
            capability denied: profile '\(profile)' uses an API key whose permissions hubscript does not know, \
            and this recipe writes (it needs \(writes)); nothing ran.
            """
        if let unreadable { text += "\nThe profile's api_key_id did not give the key's permissions: \(unreadable)." }
        return text + """

            hubscript never assumes what a key may do. Say it in the profile '\(profile)', one of:
              api_key_permissions = { … }   the key's permissions; print the line from its record with a user session:
                                            hubscript keys show KEY_ID --profile SESSION_PROFILE
              api_key_id = "key_…", api_key_record_profile = "SESSION_PROFILE"
                                            read the key's record with that user session before each run
              gate = "hub"                  run without knowing them: the Hub's 403s are the only gate, so a run
                                            may stop half-way at a permission the key lacks (it can be resumed)
            """
    }

    func testARecipeThatWritesDoesNotStartInAnyModeAndNothingIsSent() throws {
        let cases: [(needs: [String], writes: String)] = [
            (Self.writingNeeds, "users.manage, entitlements.manage, api_keys.manage"),
            (["api_keys.manage"], "api_keys.manage"),
            (["audit.view", "notifications.send", "dispatch.send"], "notifications.send"),
            (["billing.manage"], "billing.manage"),
        ]
        for (needs, writes) in cases {
            for mode in [HubRunRequest.Mode.run, .plan] {
                let h = try Harness()
                let ops = try h.connection(key: SandboxFixtures.opsKeySecret, profile: "ops")
                let before = try h.auditCount(targetUser: "usr_ada")
                let prepared = try recipe(h, needs: needs, body: "print('body ran')\nhub.users.suspend(params.user, { reason = 'x' })\n")
                let output = MemoryOutput()
                XCTAssertThrowsError(try h.execute(prepared, ops, output: output) { $0.mode = mode }, "\(needs)") { error in
                    guard let denied = error as? HubGate.Denied else { return XCTFail("expected HubGate.Denied, got \(error)") }
                    XCTAssertEqual(denied.code, "capabilities_unknown")
                    XCTAssertEqual(denied.missing.joined(separator: ", "), writes)
                    XCTAssertEqual(denied.description, Self.expectedDenial(profile: "ops", writes: writes))
                }
                XCTAssertEqual(output.lines, [], "the body must not run")
                XCTAssertEqual(h.writesReceived, 0)
                XCTAssertEqual(try h.journal.listRuns().count, 0, "a denied run is not journalled")
                XCTAssertEqual(try h.auditCount(targetUser: "usr_ada"), before)
            }
        }
    }

    /// A plan made while the profile declared the key's permissions is not applied once
    /// they are unknown (the declaration removed): apply goes through the same gate.
    func testApplyIsGatedToo() throws {
        let h = try Harness()
        let declared = try h.connection(key: SandboxFixtures.opsKeySecret, profile: "ops", declared: ["users.list", "users.manage"])
        let prepared = try recipe(h, needs: ["users.list", "users.manage"], body: "hub.users.suspend(params.user, { reason = 'x' })\n")
        let planned = try h.execute(prepared, declared) { $0.mode = .plan }
        let plan = try XCTUnwrap(planned.plan)
        XCTAssertEqual(plan.writes.count, 1)
        let unknown = try h.connection(key: SandboxFixtures.opsKeySecret, profile: "ops")
        XCTAssertThrowsError(try h.execute(prepared, unknown) { $0.mode = .apply(plan) }) { error in
            XCTAssertEqual((error as? HubGate.Denied)?.code, "capabilities_unknown")
        }
        XCTAssertEqual(h.writesReceived, 0)
        XCTAssertEqual(try h.journal.writes(runID: plan.runID).count, 0)
    }

    func testAnUnreadableRecordLeavesThePermissionsUnknownAndSaysWhy() throws {
        let h = try Harness()
        // key_ops may not read another key's record (it lacks api_keys.manage).
        let ops = try h.connection(key: SandboxFixtures.opsKeySecret, profile: "ops", keyID: SandboxFixtures.jobsKeyId)
        let prepared = try recipe(h, needs: ["users.manage"], body: "hub.users.suspend(params.user)\n")
        XCTAssertThrowsError(try h.execute(prepared, ops)) { error in
            XCTAssertEqual("\(error)", Self.expectedDenial(
                profile: "ops", writes: "users.manage",
                unreadable: "reading the record of key_jobs: forbidden (403): This action requires the permission api_keys.manage"))
        }
        XCTAssertEqual(h.writesReceived, 0)
    }

    func testARecipeThatOnlyReadsRunsWithANote() throws {
        let h = try Harness()
        let ops = try h.connection(key: SandboxFixtures.opsKeySecret, profile: "ops")
        let prepared = try recipe(h, needs: ["users.list", "audit.view", "dispatch.send"], body: "print(hub.users.get(params.user).email)\n")
        let output = MemoryOutput()
        let outcome = try h.execute(prepared, ops, output: output)
        XCTAssertNil(outcome.failure, outcome.failure?.message ?? "")
        XCTAssertEqual(output.lines, ["ada@example.com"])
        XCTAssertEqual(outcome.warnings, [
            "profile 'ops' does not say which permissions its API key holds; this recipe only reads (users.list, audit.view), "
                + "so it ran and the Hub decided what it could read. A recipe that writes will not start until the profile "
                + "declares them (api_key_permissions; hubscript keys show KEY_ID --profile SESSION_PROFILE prints the line) "
                + "or sets gate = \"hub\".",
        ])
        XCTAssertEqual(h.writesReceived, 0)
    }

    func testKnownPermissionsGiveNoNote() throws {
        let h = try Harness()
        let ops = try h.connection(key: SandboxFixtures.opsKeySecret, profile: "ops", keyID: SandboxFixtures.opsKeyId)
        let outcome = try h.execute(try recipe(h, needs: ["users.list"], body: "hub.users.get(params.user)\n"), ops)
        XCTAssertNil(outcome.failure)
        XCTAssertEqual(outcome.warnings, [])
    }

    func testGateHubRunsAndTheHubs403StopsItResumably() throws {
        let h = try Harness()
        let ops = try h.connection(key: SandboxFixtures.opsKeySecret, profile: "ops", hubIsOnlyGate: true)
        let body = """
            hub.users.suspend(params.user, { reason = "offboarded" })
            hub.entitlements.grant("usr_support", { application_id = "app_wiki" })
            hub.api_keys.revoke("key_ada_cli")
            print("not reached")
            """
        let prepared = try recipe(h, needs: Self.writingNeeds, body: body)
        let output = MemoryOutput()
        let outcome = try h.execute(prepared, ops, output: output)
        XCTAssertEqual(outcome.exitCode, 1)
        XCTAssertEqual(output.lines, [])
        let message = try XCTUnwrap(outcome.failure?.message)
        XCTAssertTrue(message.hasSuffix(
            "the Hub refused hub.api_keys.revoke: This action requires the permission api_keys.manage. "
                + "(it needs api_keys.manage; this profile does not say which permissions its key holds, so the Hub is the gate). "
                + "The 2 writes made before it are journalled and will not be repeated; the run can be resumed once the "
                + "profile holds api_keys.manage: hubscript runs resume \(outcome.runID)"), message)
        XCTAssertEqual(try h.journal.writes(runID: outcome.runID).map(\.state), [.done, .done, .failed])

        // The resume the message names: the two done writes replay, the refused one is
        // asked again (and refused again, the key still lacking the permission).
        let resumed = try h.execute(prepared, ops) { $0.runID = outcome.runID }
        XCTAssertEqual(resumed.counts.replayed, 2)
        XCTAssertEqual(resumed.exitCode, 1)
        XCTAssertTrue(resumed.failure?.message.contains("The 2 writes made before it are journalled") == true,
                      resumed.failure?.message ?? "")
    }

    /// A declaration that says more than the key holds (written by hand, or a line printed
    /// before an administrator took a permission away): the gate lets the run start, and
    /// the Hub's 403 says the declaration is wrong and how to print it again.
    func testADeclarationTheHubContradictsSaysSoAtThe403() throws {
        let h = try Harness()
        let ops = try h.connection(key: SandboxFixtures.opsKeySecret, profile: "ops", declared: Capabilities.allPermissions)
        let body = """
            hub.users.suspend(params.user, { reason = "offboarded" })
            hub.api_keys.revoke("key_ada_cli")
            """
        let outcome = try h.execute(try recipe(h, needs: Self.writingNeeds, body: body), ops)
        XCTAssertEqual(outcome.exitCode, 1)
        let message = try XCTUnwrap(outcome.failure?.message)
        XCTAssertTrue(message.hasSuffix(
            "the Hub refused hub.api_keys.revoke: This action requires the permission api_keys.manage. "
                + "(it needs api_keys.manage, which the profile's api_key_permissions declare, but the key lacks it: print the line "
                + "again with hubscript keys show KEY_ID --profile SESSION_PROFILE). "
                + "The 1 write made before it is journalled and will not be repeated; the run can be resumed once the "
                + "profile holds api_keys.manage: hubscript runs resume \(outcome.runID)"), message)
    }

    /// hub.capabilities() tells a recipe only what is known: with gate = "hub" the gate
    /// assumes every permission, but a recipe that branches on them must not.
    func testHubCapabilitiesListsOnlyKnownPermissions() throws {
        let h = try Harness()
        let body = """
            local caps = hub.capabilities()
            print(#caps.permissions, caps.permissions_known, caps.source)
            """
        let cases: [(HubConnection, String)] = [
            (try h.connection(key: SandboxFixtures.opsKeySecret, profile: "ops", hubIsOnlyGate: true), "0\tfalse\tapi_key_hub_gate"),
            (try h.connection(key: SandboxFixtures.opsKeySecret, profile: "ops"), "0\tfalse\tapi_key_unknown"),
            (try h.connection(key: SandboxFixtures.opsKeySecret, profile: "ops", declared: ["users.list", "users.manage"]),
             "2\ttrue\tapi_key_declared"),
            (try h.connection(key: SandboxFixtures.opsKeySecret, profile: "ops", keyID: SandboxFixtures.opsKeyId),
             "5\ttrue\tapi_key_record"),
        ]
        for (connection, expected) in cases {
            let output = MemoryOutput()
            let outcome = try h.execute(try recipe(h, needs: ["users.list"], body: body), connection, output: output)
            XCTAssertNil(outcome.failure, outcome.failure?.message ?? "")
            XCTAssertEqual(output.lines, [expected])
        }
    }

    /// What "a recipe that writes" means: no binding that writes needs a permission the
    /// gate counts as read-only. The one write that needs none marks the caller's own
    /// inbox read (a user session's; an API key has no inbox).
    func testEveryBindingThatWritesNeedsAWritePermission() throws {
        let h = try Harness()
        let coordinator = WriteCoordinator(runID: "r", mode: .plan, journal: h.journal, writeLimit: nil, masking: SecretRedactor())
        let plugin = HubModule.make(HubRunContext(client: try h.jobs.client, writes: coordinator))
        let writers = plugin.functions.filter(\.writes)
        XCTAssertGreaterThan(writers.count, 20)
        XCTAssertEqual(writers.filter { $0.capability == nil }.map(\.name), ["inbox.mark_read"])
        for function in writers {
            guard let permission = function.capability else { continue }
            XCTAssertEqual(HubGate.writePermissions(in: [permission]), [permission], function.name)
        }
    }
}
