import Foundation
import HTTPKit
import HubClient
import HubSandbox
import ScriptHost
import XCTest
@testable import Secrets

/// The admin bindings (users.create … api_keys.rotate) against the in-memory sandbox:
/// what each returns, hostile arguments with the exact error, and a new
/// API key's secret reaching the vault and nothing else (output, journal, plan).
final class AdminBindingTests: XCTestCase {
    static func recipe(needs: [String], _ body: String) -> String {
        """
        recipe {
          name = "admin",
          version = "1.0.0",
          description = "Test fixture.",
          needs = { \(needs.map { "\"\($0)\"" }.joined(separator: ", ")) },
        }

        """ + body
    }

    /// A user access token from the sandbox (MFA completed with the fixed code).
    static func accessToken(_ sandbox: HubSandbox, _ email: String) throws -> String {
        func post(_ path: String, _ body: String) throws -> ScriptValue {
            let r = sandbox.handle(HTTPRequestMessage(method: "POST", target: path, headers: HTTPHeaders([("Substratal-Version", "1")]),
                                                      body: Data(body.utf8)))
            return try JSONCodec.decode(r.body)
        }
        var answer = try post("/auth/login", #"{"email":"\#(email)","password":"x"}"#)
        if let mfa = answer["mfa_token"].stringValue {
            answer = try post("/auth/mfa/verify", #"{"mfa_token":"\#(mfa)","code":"123456"}"#)
        }
        return try XCTUnwrap(answer["access_token"].stringValue)
    }

    /// How many audit events of `action` the sandbox holds (jobs key).
    static func events(_ sandbox: HubSandbox, _ action: String) throws -> Int {
        let r = sandbox.handle(HTTPRequestMessage(method: "GET", target: "/audit-events?limit=100&action=\(action)",
                                                  headers: HTTPHeaders([("Substratal-Version", "1"),
                                                                        ("Authorization", "Bearer \(SandboxFixtures.jobsKeySecret)")]),
                                                  body: Data()))
        XCTAssertEqual(r.status, 200)
        guard case .array(let items) = try JSONCodec.decode(r.body)["data"] else { throw ScriptMessageError("no data") }
        return items.count
    }

    /// The first whole API key secret (`satk_test_` or `satk_live_` and 32 characters) in
    /// `text`; the 14-character `prefix` and the `…abcd` hint a key record shows are not one.
    static func fullSecret(in text: String) -> String? {
        guard let range = text.range(of: "satk_(test|live)_[a-z0-9]{20,}", options: .regularExpression) else { return nil }
        return String(text[range])
    }

    private func admin(_ h: GatingTests.Harness) throws -> HubConnection {
        try h.connection(key: try Self.accessToken(h.sandbox, "admin@example.com"), profile: "admin")
    }

    // MARK: API keys: results, never keys

    func testCreatedAndRotatedSecretsGoToTheVaultOnly() throws {
        let h = try GatingTests.Harness()
        let vault = MemorySecrets()
        let prepared = try h.recipe("keys.lua", Self.recipe(needs: ["api_keys.manage"], """
            local k = hub.api_keys.create({ name = "ci", permissions = { "users.list" }, mode = "test" }, { store = "hub/keys/ci" })
            print("created", k.id:sub(1, 4), k.secret_stored_in, tostring(k.secret), k.status)
            print("concat", pcall(function() return "x" .. k.secret end))
            print("encode", (pcall(json.encode, k)))
            local r = hub.api_keys.rotate(k.id, { store = "hub/keys/ci" })
            print("rotated", r.id == k.id, tostring(r.secret))
            local u = hub.api_keys.update(k.id, { name = "ci-2" })
            print("updated", u.name)
            print("got", hub.api_keys.get(k.id).name)
            log.info("key", { key = k })
            """))
        let output = MemoryOutput()
        let outcome = try h.execute(prepared, try admin(h), output: output) { $0.secrets = vault }
        XCTAssertNil(outcome.failure, outcome.failure?.message ?? "")
        XCTAssertEqual(output.lines.first, "created\tkey_\thub/keys/ci\t<stored secret hub/keys/ci>\tactive")
        XCTAssertTrue(output.lines[1].hasPrefix("concat\tfalse\t"), output.lines[1])
        XCTAssertEqual(Array(output.lines.dropFirst(2)), ["encode\tfalse", "rotated\ttrue\t<stored secret hub/keys/ci>", "updated\tci-2", "got\tci-2"])
        let secret = try vault.value(of: "hub/keys/ci")
        XCTAssertTrue(secret.hasPrefix("satk_test_"), secret)
        // The stored secret is the rotated one, and it works.
        let probe = h.sandbox.handle(HTTPRequestMessage(method: "GET", target: "/users/usr_ada",
                                                        headers: HTTPHeaders([("Substratal-Version", "1"), ("Authorization", "Bearer \(secret)")]),
                                                        body: Data()))
        XCTAssertEqual(probe.status, 200)
        let everything = output.lines.joined(separator: "\n") + output.logs.map(\.message).joined(separator: "\n")
        XCTAssertNil(Self.fullSecret(in: everything), everything)
        let writes = try h.journal.writes(runID: outcome.runID)
        XCTAssertEqual(writes.map { $0.path.hasPrefix("/api-keys") }, [true, true, true])
        for w in writes {
            XCTAssertNil(Self.fullSecret(in: w.responseJSON ?? ""), w.responseJSON ?? "")
            XCTAssertFalse((w.responseJSON ?? "").contains("\"secret\""), w.responseJSON ?? "")
            // Withheld, not merely masked: the redactor had nothing to replace.
            XCTAssertFalse((w.responseJSON ?? "").contains("<secret"), w.responseJSON ?? "")
        }
        XCTAssertEqual(vault.names, ["hub/keys/ci"])
    }

    func testAResumedRunReplaysTheCreateWithoutTheSecret() throws {
        let h = try GatingTests.Harness()
        let vault = MemorySecrets()
        let prepared = try h.recipe("keys.lua", Self.recipe(needs: ["api_keys.manage"], """
            local k = hub.api_keys.create({ name = "once", permissions = { "audit.view" }, mode = "live" }, { store = "hub/keys/once" })
            print(k.id:sub(1, 4), tostring(k.secret))
            hub.api_keys.update(k.id, { name = "once-2" })
            """))
        let connection = try admin(h)
        // The write limit stops the run before its second write, as a kill would.
        let first = try h.execute(prepared, connection) {
            $0.secrets = vault
            $0.maxWrites = 1
        }
        XCTAssertNotNil(first.failure)
        let stored = try vault.value(of: "hub/keys/once")
        let output = MemoryOutput()
        let resumed = try h.execute(prepared, connection, output: output) {
            $0.secrets = vault
            $0.runID = first.runID
            $0.maxWrites = 100
        }
        XCTAssertNil(resumed.failure, resumed.failure?.message ?? "")
        XCTAssertEqual(output.lines, ["key_\t<stored secret hub/keys/once>"])
        XCTAssertEqual(resumed.counts.replayed, 1)
        XCTAssertEqual(try vault.value(of: "hub/keys/once"), stored)
        XCTAssertEqual(try Self.events(h.sandbox, "api_key.created"), 1)
        XCTAssertEqual(try Self.events(h.sandbox, "api_key.updated"), 1)
    }

    /// A store that fails its first `store` call, as a vault that could not be written
    /// (a full disk, a crash) would.
    final class FailingOnceStore: SecretStore, @unchecked Sendable {
        let inner = MemorySecrets()
        private let lock = NSLock()
        private var failed = false
        func value(of name: String) throws -> String { try inner.value(of: name) }
        func store(_ value: String, as name: String) throws {
            let first = lock.withLock { () -> Bool in defer { failed = true }; return !failed }
            if first { throw ScriptStructuredError(code: "vault_error", message: "disk full") }
            try inner.store(value, as: name)
        }
    }

    func testAVaultWriteThatFailsLeavesTheCreatePendingAndTheResumeStoresTheReplayedSecret() throws {
        let h = try GatingTests.Harness()
        let vault = FailingOnceStore()
        let prepared = try h.recipe("keys.lua", Self.recipe(needs: ["api_keys.manage"], """
            local k = hub.api_keys.create({ name = "flaky", permissions = {}, mode = "test" }, { store = "hub/keys/flaky" })
            print(k.id:sub(1, 4), tostring(k.secret))
            """))
        let connection = try admin(h)
        let first = try h.execute(prepared, connection) { $0.secrets = vault }
        XCTAssertEqual(first.failure?.message.contains("disk full"), true, first.failure?.message ?? "")
        XCTAssertEqual(try h.journal.writes(runID: first.runID).map(\.state), [.pending])
        XCTAssertEqual(vault.inner.names, [String]())
        let output = MemoryOutput()
        let resumed = try h.execute(prepared, connection, output: output) {
            $0.secrets = vault
            $0.runID = first.runID
        }
        XCTAssertNil(resumed.failure, resumed.failure?.message ?? "")
        XCTAssertEqual(output.lines, ["key_\t<stored secret hub/keys/flaky>"])
        // The Hub replayed its stored answer: one key, and the stored secret is its live one.
        XCTAssertEqual(try Self.events(h.sandbox, "api_key.created"), 1)
        let secret = try vault.inner.value(of: "hub/keys/flaky")
        let probe = h.sandbox.handle(HTTPRequestMessage(method: "GET", target: "/permissions",
                                                        headers: HTTPHeaders([("Substratal-Version", "1"), ("Authorization", "Bearer \(secret)")]),
                                                        body: Data()))
        XCTAssertEqual(probe.status, 200)
    }

    func testCreateWithoutAVaultIsRefusedBeforeSending() throws {
        let h = try GatingTests.Harness()
        let prepared = try h.recipe("keys.lua", Self.recipe(needs: ["api_keys.manage"], """
            local ok, err = pcall(hub.api_keys.create, { name = "ci", permissions = {}, mode = "test" }, { store = "hub/keys/ci" })
            print(err.code)
            """))
        let output = MemoryOutput()
        let before = h.writesReceived
        _ = try h.execute(prepared, try admin(h), output: output)
        XCTAssertEqual(output.lines, ["vault_not_open"])
        XCTAssertEqual(h.writesReceived, before)
    }

    func testPlanModeStoresNothing() throws {
        let h = try GatingTests.Harness()
        let vault = MemorySecrets()
        let prepared = try h.recipe("keys.lua", Self.recipe(needs: ["api_keys.manage"], """
            local k = hub.api_keys.create({ name = "ci", permissions = {}, mode = "test" }, { store = "hub/keys/ci" })
            print(k.id, k.secret_stored_in, tostring(k.secret))
            """))
        let output = MemoryOutput()
        let outcome = try h.execute(prepared, try admin(h), output: output) {
            $0.secrets = vault
            $0.mode = .plan
        }
        XCTAssertNil(outcome.failure, outcome.failure?.message ?? "")
        XCTAssertEqual(output.lines, ["key_planned_1\thub/keys/ci\tnil"])
        XCTAssertEqual(vault.names, [String]())
        XCTAssertEqual(outcome.plan?.writes.map(\.summary), ["create API key 'ci' (test), secret into the vault entry hub/keys/ci"])
    }

    func testAnAPIKeyCannotManageKeys() throws {
        let h = try GatingTests.Harness()
        let prepared = try h.recipe("keys.lua", Self.recipe(needs: ["api_keys.manage"], """
            local ok, err = pcall(hub.api_keys.create, { name = "ci", permissions = {}, mode = "test" }, { store = "hub/keys/ci" })
            print(err.code, err.status)
            """))
        let output = MemoryOutput()
        _ = try h.execute(prepared, try h.jobs, output: output) { $0.secrets = MemorySecrets() }
        XCTAssertEqual(output.lines, ["user_token_required\t400"])
    }

    func testHostileArgumentsToKeyBindings() throws {
        let h = try GatingTests.Harness()
        let prepared = try h.recipe("keys.lua", Self.recipe(needs: ["api_keys.manage", "users.manage", "roles.manage", "entitlements.manage", "users.list"], """
            local function try(f, ...) local ok, err = pcall(f, ...); print(tostring(err)) end
            try(hub.api_keys.create, { name = string.rep("n", 500), permissions = {}, mode = "test" }, { store = "hub/keys/a" })
            try(hub.api_keys.create, { name = "x", permissions = "users.list", mode = "test" }, { store = "hub/keys/a" })
            try(hub.api_keys.create, { name = "x", permissions = {}, mode = "prod" }, { store = "hub/keys/a" })
            try(hub.api_keys.create, { name = "x", permissions = {}, mode = "test", secret = "mine" }, { store = "hub/keys/a" })
            try(hub.api_keys.create, { name = "x", permissions = {}, mode = "test" })
            try(hub.api_keys.create, { name = "x", permissions = {}, mode = "test" }, { store = "bad\\0name" })
            try(hub.api_keys.rotate, "key_\\0x", { store = "hub/keys/a" })
            try(hub.api_keys.rotate, "key_x", { store = "sessions/prod" })
            try(hub.api_keys.rotate, "key_x", { store = "webhooks/hub" })
            try(hub.api_keys.rotate, "key_x", { store = "hub/keys/../../dispatch/ci" })
            try(hub.api_keys.rotate, "key_x", { store = "hub/keys//x" })
            try(hub.api_keys.update, "key_x", {})
            try(hub.users.create, { email = 42 })
            try(hub.users.create, { email = "a@b.co", role = "admin" })
            try(hub.roles.create, { name = "r", permissions = { 1 } })
            try(hub.users.delete, "../users")
            try(hub.organizations.grant, "org_acme", { member_scope = "allowlist" })
            try(hub.organizations.grant, "org_acme", { application_id = "app_chat", user_id = "usr_ada" })
            try(hub.entitlements.update, "ent_x", { user_id = "usr_ada" })
            try(hub.inbox.mark_read, "ntf\0x")
            try(hub.users.effective_permissions, string.rep("u", 300), "app_wiki")
            try(hub.roles.update, "role_x", { permissions = "audit.view" })
            """))
        let output = MemoryOutput()
        let before = h.writesReceived
        _ = try h.execute(prepared, try admin(h), output: output) { $0.secrets = MemorySecrets() }
        XCTAssertEqual(output.lines, [
            "bad argument #1 to 'hub.api_keys.create' (field 'name' is 500 bytes; the most is 400)",
            "bad argument #1 to 'hub.api_keys.create' (field 'permissions' (a list of permission keys such as \"users.list\") is required)",
            "bad argument #1 to 'hub.api_keys.create' (field 'mode' (\"live\" or \"test\") is required)",
            "bad argument #1 to 'hub.api_keys.create' (unknown field 'secret' (fields: name, scope, permissions, mode, intended_use, restrict_destructive, expires_at))",
            "bad argument #2 to 'hub.api_keys.create' (option 'store' (the vault entry for the new secret, e.g. \"hub/keys/ci\") is required)",
            "bad argument #2 to 'hub.api_keys.create' (option 'store': invalid name 'bad\u{0}name': use 1–255 letters, digits and . _ - / @ : + = starting with a letter or digit)",
            "bad argument #1 to 'hub.api_keys.rotate' (an id cannot contain control characters (byte 5 is 0x00))",
            "bad argument #2 to 'hub.api_keys.rotate' (option 'store': 'sessions/prod' is not a name under hub/keys/: a recipe stores the secrets of the keys it makes only there, so it cannot replace another secret (a webhook's, Dispatch's, a session); e.g. hub/keys/ci-deploy)",
            "bad argument #2 to 'hub.api_keys.rotate' (option 'store': 'webhooks/hub' is not a name under hub/keys/: a recipe stores the secrets of the keys it makes only there, so it cannot replace another secret (a webhook's, Dispatch's, a session); e.g. hub/keys/ci-deploy)",
            "bad argument #2 to 'hub.api_keys.rotate' (option 'store': 'hub/keys/../../dispatch/ci' is not a name under hub/keys/: a recipe stores the secrets of the keys it makes only there, so it cannot replace another secret (a webhook's, Dispatch's, a session); e.g. hub/keys/ci-deploy)",
            "bad argument #2 to 'hub.api_keys.rotate' (option 'store': 'hub/keys//x' is not a name under hub/keys/: a recipe stores the secrets of the keys it makes only there, so it cannot replace another secret (a webhook's, Dispatch's, a session); e.g. hub/keys/ci-deploy)",
            "bad argument #2 to 'hub.api_keys.update' (at least one field to change expected)",
            "bad argument #1 to 'hub.users.create' (field 'email' (a string) is required)",
            "bad argument #1 to 'hub.users.create' (unknown field 'role' (fields: email, display_name, status, send_invitation))",
            "bad argument #1 to 'hub.roles.create' (field 'permissions' (a list of permission keys, may be empty) is required)",
            "bad argument #1 to 'hub.users.delete' (an id such as usr_… expected, got '../users')",
            "bad argument #2 to 'hub.organizations.grant' (field 'application_id' (a string) is required)",
            "bad argument #2 to 'hub.organizations.grant' (unknown field 'user_id' (fields: application_id, member_scope, member_overrides, starts_at, ends_at))",
            "bad argument #2 to 'hub.entitlements.update' (unknown field 'user_id' (fields: status, disabled_reason, ends_at, source, member_scope, member_overrides))",
            "bad argument #1 to 'hub.inbox.mark_read' (an id cannot contain control characters (byte 4 is 0x00))",
            "bad argument #1 to 'hub.users.effective_permissions' (id is 300 bytes; the most is 255)",
            "bad argument #2 to 'hub.roles.update' (field 'permissions' must be a list of permission keys)",
        ])
        XCTAssertEqual(h.writesReceived, before)
    }

    // MARK: Users, roles, access, inbox

    func testUserLifecycleRolesAndAccess() throws {
        let h = try GatingTests.Harness()
        let prepared = try h.recipe("admin.lua", Self.recipe(needs: ["users.manage", "users.list", "roles.manage", "entitlements.manage"], """
            local u = hub.users.create { email = "New@Example.com", display_name = "New" }
            print("created", u.email, u.status)
            print("invited", hub.users.resend_invitation(u.id))
            local ok, err = pcall(hub.users.create, { email = "new@example.com" })
            print("taken", err.code, err.details.existing_user_id == u.id)
            local r = hub.roles.create { name = "auditor", permissions = { "audit.view" } }
            print("role", r.id, hub.roles.get(r.id).assignment_count)
            print("role updated", table.concat(hub.roles.update(r.id, { permissions = { "audit.view", "users.list" } }).permissions, ","))
            print("role deleted", hub.roles.delete(r.id))
            local e = hub.users.effective_permissions("usr_ada", "app_wiki")
            print("effective", e.allowed, e.entitlement_status, #e.access_paths)
            local renewed = hub.entitlements.update("ent_ada_analytics", { status = "active", ends_at = "2099-01-01T00:00:00Z", source = "purchase" })
            print("renewed", renewed.status, renewed.source, renewed.ends_at)
            local g = hub.organizations.grant("org_acme", { application_id = "app_chat", member_scope = "allowlist", member_overrides = { "usr_ada" } })
            print("org grant", g.source, g.included_member_count, json.isnull(g.user_id))
            local bundle = hub.users.export("usr_ada")
            print("export", bundle.user.id, #bundle.sessions)
            print("deleted", hub.users.delete(u.id))
            ok, err = pcall(hub.users.get, u.id)
            print("gone", err.code)
            """))
        let output = MemoryOutput()
        let outcome = try h.execute(prepared, try h.jobs, output: output)
        XCTAssertNil(outcome.failure, outcome.failure?.message ?? "")
        XCTAssertEqual(output.lines, [
            "created\tnew@example.com\tinvited", "invited\ttrue", "taken\temail_taken\ttrue",
            "role\trole_platform_auditor\t0", "role updated\taudit.view,users.list", "role deleted\ttrue",
            "effective\ttrue\tactive\t1", "renewed\tactive\tpurchase\t2099-01-01T00:00:00Z", "org grant\torg_seat\t1\ttrue", "export\tusr_ada\t3",
            "deleted\ttrue", "gone\tnot_found",
        ])
        XCTAssertEqual(try h.journal.writes(runID: outcome.runID).map(\.state.rawValue),
                       ["done", "done", "failed", "done", "done", "done", "done", "done", "done"])
    }

    func testInboxMarkReadAsTheUser() throws {
        let h = try GatingTests.Harness()
        let ada = try h.connection(key: try Self.accessToken(h.sandbox, "ada@example.com"), profile: "ada")
        let prepared = try h.recipe("inbox.lua", Self.recipe(needs: [], """
            for n in hub.inbox.list { category = "security." } do
              print(n.id, n.state, hub.inbox.mark_read(n.id).state)
            end
            print(#hub.inbox.list { state = "read" }:collect())
            """))
        let output = MemoryOutput()
        let outcome = try h.execute(prepared, ada, output: output)
        XCTAssertNil(outcome.failure, outcome.failure?.message ?? "")
        XCTAssertEqual(output.lines, ["ntf_ada_signin\tunread\tread", "1"])
    }

    func testNewBindingsNeedTheirDeclaredPermission() throws {
        let h = try GatingTests.Harness()
        for (call, permission) in [("hub.users.create{ email = 'a@b.co' }", "users.manage"),
                                   ("hub.roles.create{ name = 'x', permissions = {} }", "roles.manage"),
                                   ("hub.users.effective_permissions('usr_ada', 'app_wiki')", "users.list"),
                                   ("hub.api_keys.rotate('key_x', { store = 'a' })", "api_keys.manage")] {
            let prepared = try h.recipe("gate.lua", Self.recipe(needs: ["audit.view"], "local ok, err = pcall(function() return \(call) end)\nprint(err.code, err.permission)"))
            let output = MemoryOutput()
            _ = try h.execute(prepared, try h.jobs, output: output)
            XCTAssertEqual(output.lines, ["permission_not_declared\t\(permission)"], call)
        }
    }
}
