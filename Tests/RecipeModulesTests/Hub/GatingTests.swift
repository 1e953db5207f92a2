import Foundation
import HTTPKit
import HubSandbox
import ScriptHost
import XCTest
@testable import HubClient
@testable import RunJournal
@testable import RecipeModules
@testable import Runs

/// docs/design.md "Capabilities gating" and the write limit, in process: `HubRecipeRun.execute`
/// against an in-memory sandbox Hub.
final class GatingTests: XCTestCase {
    /// One in-memory sandbox, one journal and a temporary state folder per test.
    final class Harness {
        let sandbox: HubSandbox
        let journal: Journal
        let root: URL
        let state: StateDirectory
        private let counts = ClientLock([String: Int]())

        init(faults: FaultSpec = .none) throws {
            sandbox = try HubSandbox(options: SandboxOptions(storage: .memory, rateLimits: .off, faults: faults))
            journal = try Journal.inMemory()
            root = FileManager.default.temporaryDirectory.appendingPathComponent("hubscript-gating-tests-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            state = StateDirectory(explicit: root.appendingPathComponent("state").path)
        }

        deinit { try? FileManager.default.removeItem(at: root) }

        /// Requests other than GET that reached the sandbox.
        var writesReceived: Int { counts.withLock { $0["writes"] ?? 0 } }

        /// Requests whose path starts with `prefix` that reached the sandbox.
        func received(under prefix: String) -> Int {
            counts.withLock { $0.filter { $0.key.hasPrefix("path:" + prefix) }.values.reduce(0, +) }
        }

        /// A connection with an API key, as a profile would make it.
        func connection(key: String, profile: String, keyID: String? = nil, declared: [String]? = nil, hubIsOnlyGate: Bool = false,
                        warn: @escaping @Sendable (String) -> Void = { _ in }) throws -> HubConnection {
            let sandbox = self.sandbox
            let counts = self.counts
            var options = HubClientOptions(rateLimitPerMinute: 0, warn: warn, profileName: profile,
                                           apiKeyPermissions: declared, apiKeyID: keyID)
            options.hubIsOnlyGate = hubIsOnlyGate
            let client = try HubClient(
                baseURL: URL(string: "http://127.0.0.1")!, credential: .apiKey(key),
                transport: InProcessTransport(handler: { request in
                    counts.withLock { $0["path:" + request.path, default: 0] += 1 }
                    if request.method != "GET" { counts.withLock { $0["writes", default: 0] += 1 } }
                    return sandbox.handle(request)
                }), options: options)
            return HubConnection(profileName: profile, client: client, notice: nil)
        }

        var jobs: HubConnection {
            get throws { try connection(key: SandboxFixtures.jobsKeySecret, profile: "jobs", keyID: SandboxFixtures.jobsKeyId) }
        }

        /// Writes `source` to `name` in the temporary folder and prepares it.
        func recipe(_ name: String, _ source: String, params: [(String, String)] = []) throws -> PreparedRecipe {
            let url = root.appendingPathComponent(name)
            try Data(source.utf8).write(to: url)
            return try PreparedRecipe(path: url.path, cliParams: params)
        }

        func execute(_ prepared: PreparedRecipe, _ connection: HubConnection, output: MemoryOutput = MemoryOutput(),
                     configure: (inout HubRunRequest) -> Void = { _ in }) throws -> HubRunOutcome {
            var request = HubRunRequest()
            request.outputFolder = root.appendingPathComponent("out")
            request.progress = MemoryProgressReporter()
            configure(&request)
            return try HubRecipeRun.execute(prepared, request: request, connection: connection, journal: journal,
                                            state: state, output: output)
        }

        /// Audit events about `user` (jobs key, straight from the sandbox). Throws when a
        /// page is not a 200 list page, so "nothing changed" cannot pass because the
        /// count itself failed.
        func auditCount(targetUser user: String) throws -> Int {
            var n = 0
            var cursor: String?
            repeat {
                var headers = HTTPHeaders()
                headers.add("Substratal-Version", "1")
                headers.add("Authorization", "Bearer \(SandboxFixtures.jobsKeySecret)")
                var target = "/audit-events?limit=100&target_user_id=\(user)"
                if let cursor { target += "&cursor=\(cursor.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)" }
                let r = sandbox.handle(HTTPRequestMessage(method: "GET", target: target, headers: headers))
                let body = String(decoding: r.body, as: UTF8.self)
                guard r.status == 200,
                      let json = try JSONSerialization.jsonObject(with: r.body) as? [String: Any],
                      let data = json["data"] as? [Any] else {
                    throw AuditCountError(description: "GET \(target) answered \(r.status): \(body)")
                }
                n += data.count
                let page = json["page"] as? [String: Any]
                cursor = (page?["has_more"] as? Bool) == true ? page?["next_cursor"] as? String : nil
            } while cursor != nil
            return n
        }
    }

    struct AuditCountError: Error, CustomStringConvertible { let description: String }

    static let header = """
        recipe {
          name = "gating",
          version = "1.0.0",
          description = "Test fixture.",
          params = { user = { type = "string", default = "usr_ada" } },
          needs = NEEDS,
        }

        """

    func recipeText(needs: [String], extraManifest: String = "", body: String) -> String {
        let list = "{ " + needs.map { "\"\($0)\"" }.joined(separator: ", ") + " }" + extraManifest
        return Self.header.replacingOccurrences(of: "NEEDS", with: list) + body
    }

    // MARK: Missing capability

    func testMissingCapabilityIsDeniedBeforeTheBodyRunsNamingEachPermissionAndRole() throws {
        let h = try Harness()
        let support = try h.connection(key: SandboxFixtures.supportKeySecret, profile: "support", keyID: SandboxFixtures.supportKeyId)
        let prepared = try h.recipe("offboard-ish.lua", recipeText(
            needs: ["users.list", "users.manage", "audit.view", "entitlements.manage", "billing.manage"],
            body: "print('body ran')\nhub.users.suspend(params.user, { reason = 'x' })\n"))
        let output = MemoryOutput()
        XCTAssertThrowsError(try h.execute(prepared, support, output: output)) { error in
            guard let denied = error as? HubGate.Denied else { return XCTFail("expected HubGate.Denied, got \(error)") }
            XCTAssertEqual(denied.missing, ["users.manage", "entitlements.manage", "billing.manage"])
            XCTAssertEqual(denied.description, """
                capability denied: profile 'support' uses an API key that lacks what the recipe needs: \
                users.manage, entitlements.manage, billing.manage; nothing ran.
                Its permissions are those of its record (api_key_id): ask an administrator to give the key them, \
                or use a profile whose key holds them.
                """)
            XCTAssertEqual(denied.code, "capability_denied")
        }
        XCTAssertEqual(output.lines, [], "the body must not run")
        XCTAssertEqual(h.writesReceived, 0)
        XCTAssertEqual(try h.journal.listRuns().count, 0, "a denied run is not journalled")
    }

    func testDeclaredKeyPermissionsAreGatedToo() throws {
        let h = try Harness()
        let declared = try h.connection(key: SandboxFixtures.supportKeySecret, profile: "declared",
                                        declared: ["users.list", "audit.view"])
        let prepared = try h.recipe("r.lua", recipeText(needs: ["users.list", "roles.manage"], body: "print('body ran')\n"))
        XCTAssertThrowsError(try h.execute(prepared, declared)) { error in
            XCTAssertEqual((error as? HubGate.Denied)?.description, """
                capability denied: profile 'declared' uses an API key that lacks what the recipe needs: roles.manage; nothing ran.
                Its permissions are the profile's api_key_permissions: if the key was given it since, print the line again \
                (hubscript keys show KEY_ID --profile SESSION_PROFILE). Otherwise ask an administrator to give the key it, \
                or use a profile whose key holds it.
                """)
        }
    }

    // MARK: Undeclared permission

    func testBindingWhosePermissionIsNotDeclaredFailsInsideTheRecipe() throws {
        let h = try Harness()
        let prepared = try h.recipe("undeclared.lua", recipeText(needs: ["users.list"], body: """
            local ok, err = pcall(hub.users.suspend, params.user, { reason = "x" })
            print(ok, type(err))
            print(err.code)
            print(err.message)
            print(err.permission)
            print(tostring(err) == err.message or tostring(err):find(err.message, 1, true) ~= nil)
            local user = hub.users.get(params.user)
            print(user.status)
            """))
        let output = MemoryOutput()
        let outcome = try h.execute(prepared, try h.jobs, output: output)
        XCTAssertNil(outcome.failure, outcome.failure?.message ?? "")
        XCTAssertEqual(outcome.exitCode, 0)
        XCTAssertEqual(output.lines, [
            "false\ttable",
            "permission_not_declared",
            "hub.users.suspend needs 'users.manage', which this recipe's manifest does not declare; add \"users.manage\" to needs",
            "users.manage",
            "true",
            "active",
        ])
        XCTAssertEqual(h.writesReceived, 0, "nothing was sent for the refused binding")
    }

    func testUncaughtUndeclaredPermissionFailsTheRun() throws {
        let h = try Harness()
        let prepared = try h.recipe("undeclared.lua", recipeText(needs: ["users.list"], body: """
            hub.roles.remove(params.user, "role_billing_admin")
            """))
        let outcome = try h.execute(prepared, try h.jobs)
        XCTAssertEqual(outcome.exitCode, 1)
        XCTAssertEqual(outcome.failure?.structured?["code"].stringValue, "permission_not_declared")
        XCTAssertTrue(outcome.failure?.message.contains(
            "hub.roles.remove needs 'roles.manage', which this recipe's manifest does not declare; add \"roles.manage\" to needs") == true,
            outcome.failure?.message ?? "")
        XCTAssertEqual(h.writesReceived, 0)
    }

    // MARK: Server 403

    func testServer403ForAPermissionTheProfileClaimsBecomesAClearError() throws {
        let h = try Harness()
        // key_ops lacks organizations.manage, but the profile declares it holds it.
        let ops = try h.connection(key: SandboxFixtures.opsKeySecret, profile: "ops",
                                   declared: ["users.list", "users.manage", "organizations.manage"])
        let prepared = try h.recipe("forbidden.lua", recipeText(needs: ["users.list", "organizations.manage"], body: """
            local ok, err = pcall(hub.organizations.remove_member, "org_acme", params.user)
            print(ok, err.code, err.status)
            print(err.message)
            print(err.details.required_permission)
            """))
        let output = MemoryOutput()
        let outcome = try h.execute(prepared, ops, output: output)
        XCTAssertNil(outcome.failure, outcome.failure?.message ?? "")
        XCTAssertEqual(output.lines, [
            "false\tforbidden\t403",
            "the Hub refused hub.organizations.remove_member: This action requires the permission organizations.manage. "
                + "(it needs organizations.manage, which the profile's api_key_permissions declare, but the key lacks it: "
                + "print the line again with hubscript keys show KEY_ID --profile SESSION_PROFILE)",
            "organizations.manage",
        ])
        // The refused write is journalled as failed (so a resume sends it again).
        let writes = try h.journal.writes(runID: outcome.runID)
        XCTAssertEqual(writes.map(\.state), [.failed])
        XCTAssertEqual(writes.first?.httpStatus, 403)
        XCTAssertEqual(outcome.counts.failed, 1)
    }

    func testRoleEscalationIsRefusedByTheHubAsAStructuredError() throws {
        let h = try Harness()
        let ops = try h.connection(key: SandboxFixtures.opsKeySecret, profile: "ops", keyID: SandboxFixtures.opsKeyId)
        let prepared = try h.recipe("escalate.lua", recipeText(needs: ["users.list", "roles.manage"], body: """
            local ok, err = pcall(hub.roles.assign, params.user, "role_superadmin")
            print(ok, err.code, err.status)
            print(err.message)
            print(err.details.role_id, table.concat(err.details.missing_permissions, ","))
            """))
        let before = try h.auditCount(targetUser: "usr_ada")
        let output = MemoryOutput()
        let outcome = try h.execute(prepared, ops, output: output)
        XCTAssertNil(outcome.failure, outcome.failure?.message ?? "")
        XCTAssertEqual(output.lines.first, "false\trole_escalation_forbidden\t403")
        XCTAssertEqual(output.lines.dropFirst().first,
                       "You cannot assign role_superadmin: it holds permissions you lack "
                       + "(api_keys.manage, applications.manage, billing.manage, notifications.send, organizations.manage, "
                       + "tenants.manage, webhooks.manage).")
        XCTAssertEqual(output.lines.last, "role_superadmin\tapi_keys.manage,applications.manage,billing.manage,"
                       + "notifications.send,organizations.manage,tenants.manage,webhooks.manage")
        XCTAssertEqual(try h.auditCount(targetUser: "usr_ada"), before, "nothing changed")
    }

    /// A list is opened lazily: the 403 arrives with its first page, and the message
    /// should still name the binding the recipe called.
    func testServer403OnAListNamesTheListBinding() throws {
        let h = try Harness()
        let ops = try h.connection(key: SandboxFixtures.opsKeySecret, profile: "ops",
                                   declared: ["users.list", "api_keys.manage"])
        let prepared = try h.recipe("list403.lua", recipeText(needs: ["users.list", "api_keys.manage"], body: """
            local ok, err = pcall(function()
              for key in hub.api_keys.list { owner_user_id = params.user } do print(key.id) end
            end)
            print(ok, err.code, err.status)
            print(err.message)
            """))
        let output = MemoryOutput()
        let outcome = try h.execute(prepared, ops, output: output)
        XCTAssertNil(outcome.failure, outcome.failure?.message ?? "")
        XCTAssertEqual(output.lines.first, "false\tforbidden\t403")
        let message = output.lines.dropFirst().first ?? ""
        XCTAssertEqual(message, "the Hub refused hub.api_keys.list: This action requires the permission api_keys.manage. "
                       + "(it needs api_keys.manage, which the profile's api_key_permissions declare, but the key lacks it: "
                + "print the line again with hubscript keys show KEY_ID --profile SESSION_PROFILE)")
    }

    // MARK: Write limits

    static let threeGrants = """
        for _, app in ipairs { "app_wiki", "app_chat", "app_hub" } do
          print("granting " .. app)
          local ok, err = pcall(hub.entitlements.grant, "usr_support", { application_id = app })
          if not ok then print("caught: " .. tostring(err)) end
        end
        print("not reached")
        """

    func testManifestWriteLimitStopsBeforeTheFirstExcessWrite() throws {
        let h = try Harness()
        let before = try h.auditCount(targetUser: "usr_support")
        let prepared = try h.recipe("limit.lua", recipeText(
            needs: ["entitlements.manage"], extraManifest: ",\n  limits = { writes = 2 }", body: Self.threeGrants))
        let output = MemoryOutput()
        let outcome = try h.execute(prepared, try h.jobs, output: output)
        XCTAssertEqual(outcome.exitCode, 4)
        XCTAssertEqual(outcome.failure?.kind, .limit(.host))
        XCTAssertEqual(outcome.failure?.message,
                       "limit exceeded: writes: the recipe's limit is 2 (limits.writes / --max-writes); stopped before write 3: "
                       + "POST /users/usr_support/entitlements")
        XCTAssertEqual(output.lines, ["granting app_wiki", "granting app_chat", "granting app_hub"], "pcall cannot catch a limit")
        XCTAssertEqual(h.writesReceived, 2)
        XCTAssertEqual(try h.auditCount(targetUser: "usr_support") - before, 2)
        XCTAssertEqual(try h.journal.run(id: outcome.runID)?.status, .stopped)
    }

    func testMaxWritesBelowTheManifestLimitWins() throws {
        let h = try Harness()
        let prepared = try h.recipe("limit.lua", recipeText(
            needs: ["entitlements.manage"], extraManifest: ",\n  limits = { writes = 2 }", body: Self.threeGrants))
        let outcome = try h.execute(prepared, try h.jobs) { $0.maxWrites = 1 }
        XCTAssertEqual(outcome.exitCode, 4)
        XCTAssertEqual(outcome.failure?.message,
                       "limit exceeded: writes: the recipe's limit is 1 (limits.writes / --max-writes); stopped before write 2: "
                       + "POST /users/usr_support/entitlements")
        XCTAssertEqual(h.writesReceived, 1)

        // --max-writes 0: not even the first write.
        let h2 = try Harness()
        let zero = try h2.execute(try h2.recipe("limit.lua", recipeText(needs: ["entitlements.manage"], body: Self.threeGrants)),
                                  try h2.jobs) { $0.maxWrites = 0 }
        XCTAssertEqual(zero.exitCode, 4)
        XCTAssertEqual(zero.failure?.message,
                       "limit exceeded: writes: the recipe's limit is 0 (limits.writes / --max-writes); stopped before write 1: "
                       + "POST /users/usr_support/entitlements")
        XCTAssertEqual(h2.writesReceived, 0)
    }

    // MARK: Resume of a changed recipe

    func testResumeOfAChangedRecipeNeedsForce() throws {
        let h = try Harness()
        let body = """
            hub.users.suspend(params.user, { reason = "offboarded" })
            hub.roles.remove(params.user, "role_billing_admin")
            """
        let first = try h.recipe("resume.lua", recipeText(needs: ["users.manage", "roles.manage"], body: body))
        let outcome = try h.execute(first, try h.jobs) { $0.runID = "run_resume_test" }
        XCTAssertEqual(outcome.exitCode, 0, outcome.failure?.message ?? "")
        XCTAssertEqual(h.writesReceived, 2)
        let oldSHA = Digest.sha256Hex(first.file.source)

        let edited = try h.recipe("resume.lua", recipeText(needs: ["users.manage", "roles.manage"], body: body + "\n-- edited\n"))
        let newSHA = Digest.sha256Hex(edited.file.source)
        XCTAssertThrowsError(try h.execute(edited, try h.jobs) { $0.runID = "run_resume_test" }) { error in
            XCTAssertEqual((error as? HubConfigError)?.message, """
                run run_resume_test was started with another version of \(first.file.displayPath) \
                (sha256 \(oldSHA.prefix(12))…, now \(newSHA.prefix(12))…); resuming could repeat or skip changes. \
                Pass --force to resume anyway, or start a new run.
                """)
        }
        XCTAssertEqual(h.writesReceived, 2, "nothing sent by the refused resume")

        let forced = try h.execute(edited, try h.jobs) {
            $0.runID = "run_resume_test"
            $0.force = true
        }
        XCTAssertEqual(forced.exitCode, 0, forced.failure?.message ?? "")
        XCTAssertEqual(forced.counts.replayed, 2)
        XCTAssertEqual(forced.counts.writes, 0)
        XCTAssertEqual(h.writesReceived, 2, "the forced resume replays from the journal")
        XCTAssertEqual(try h.journal.run(id: "run_resume_test")?.attempts, 2)
    }

    // MARK: Plan with other params (in process: the CLI always applies with the plan's params)

    func testApplyingAPlanWithOtherParamsIsRefused() throws {
        let h = try Harness()
        let source = recipeText(needs: ["users.manage"], body: "hub.users.suspend(params.user, { reason = 'offboarded' })\n")
        let planned = try h.execute(try h.recipe("p.lua", source), try h.jobs) { $0.mode = .plan }
        let plan = try XCTUnwrap(planned.plan)
        XCTAssertEqual(plan.writes.count, 1)

        let other = try h.recipe("p.lua", source, params: [("user", "usr_support")])
        XCTAssertThrowsError(try h.execute(other, try h.jobs) { $0.mode = .apply(plan) }) { error in
            XCTAssertEqual((error as? PlanError)?.code, .paramsDiffer)
            XCTAssertEqual((error as? PlanError)?.message, """
                the plan was made with other params (plan → now: user: "usr_ada" → "usr_support"); nothing was sent. \
                Apply it with the plan's params, or make a new plan with hubscript plan \(other.file.displayPath) and these params.
                """)
        }
        XCTAssertEqual(h.writesReceived, 0)
    }
}
