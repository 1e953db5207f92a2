import Foundation
import HubSandbox
import ScriptHost
import XCTest
@testable import Secrets

/// Every binding that creates something whose id the Hub chooses predicts, in plan
/// mode, a placeholder of its own (`usr_planned_1`, `usr_planned_2`, `ent_planned_1`, …)
/// and the plan records which write creates which (docs/design.md "Plan and apply").
final class PlannedCreateBindingTests: XCTestCase {
    static let body = """
        local u = hub.users.create({ email = "new@example.com" })
        local e = hub.entitlements.grant(u.id, { application_id = "app_wiki" })
        local o = hub.organizations.grant("org_acme", { application_id = "app_crm" })
        local k = hub.api_keys.create({ name = "ci", permissions = {}, mode = "test" }, { store = "hub/keys/ci" })
        local w = hub.webhooks.create({ url = "https://hooks.example.com/h", events = { "*" } })
        local t = hub.webhooks.test(w.id)
        local n = hub.notifications.send("app_hub", { user_id = u.id, title = "Hi", body = "Welcome.", category = "welcome" })
        local r = hub.roles.create({ name = "auditor", permissions = {} })
        local u2 = hub.users.create({ email = "second@example.com" })
        print(u.id, e.id, o.id, k.id, w.id, t.delivery_id, n.id, r.id, u2.id, u.planned)
        """

    func testEachCreateBindingPredictsItsOwnPlaceholder() throws {
        let h = try GatingTests.Harness()
        let prepared = try h.recipe("creates.lua", AdminBindingTests.recipe(
            needs: ["users.manage", "entitlements.manage", "api_keys.manage", "webhooks.manage", "notifications.send",
                    "roles.manage"], Self.body))
        let output = MemoryOutput()
        let connection = try h.connection(key: try AdminBindingTests.accessToken(h.sandbox, "admin@example.com"), profile: "admin")
        let outcome = try h.execute(prepared, connection, output: output) {
            $0.secrets = MemorySecrets()
            $0.mode = .plan
        }
        XCTAssertNil(outcome.failure, outcome.failure?.message ?? "")
        XCTAssertEqual(output.lines, [[
            "usr_planned_1", "ent_planned_1", "ent_planned_2", "key_planned_1", "whk_planned_1", "dlv_planned_1",
            "ntf_planned_1", "role_platform_auditor", "usr_planned_2", "true",
        ].joined(separator: "\t")])
        let writes = try XCTUnwrap(outcome.plan?.writes)
        XCTAssertEqual(writes.map { $0.creates.map { "\($0.placeholder) in \($0.field)" } ?? "-" }, [
            "usr_planned_1 in id", "ent_planned_1 in id", "ent_planned_2 in id", "key_planned_1 in id", "whk_planned_1 in id",
            "dlv_planned_1 in delivery_id", "ntf_planned_1 in id", "-", "usr_planned_2 in id",
        ])
        XCTAssertEqual(writes[1].path, "/users/usr_planned_1/entitlements")
        XCTAssertEqual(writes[5].path, "/webhooks/whk_planned_1/test")
        XCTAssertEqual(writes[6].body?["user_id"], "usr_planned_1")
    }
}
