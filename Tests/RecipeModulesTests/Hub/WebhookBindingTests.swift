import Foundation
import HubSandbox
import ScriptHost
import XCTest

/// `hub.webhooks.*` against the in-memory sandbox: gated by webhooks.manage, and a
/// signing secret never reaches the recipe, its output or the journal.
final class WebhookBindingTests: XCTestCase {
    static func recipe(needs: String, _ body: String) -> String {
        """
        recipe {
          name = "hooks",
          version = "1.0.0",
          description = "Test fixture.",
          needs = { "\(needs)" },
        }

        """ + body
    }

    func testBindingsManageWebhooksAndNeverHandOutTheSecret() throws {
        let h = try GatingTests.Harness()
        let prepared = try h.recipe("hooks.lua", Self.recipe(needs: "webhooks.manage", """
            local w = hub.webhooks.create { url = "http://127.0.0.1:9/hooks", events = { "user.suspended" }, description = "d" }
            print("created", w.id:sub(1, 4), tostring(w.signing_secret), tostring(w.signing_secret_withheld), w.status)
            print("listed", #hub.webhooks.list():collect())
            print("got", hub.webhooks.get(w.id).url)
            print("updated", hub.webhooks.update(w.id, { events = { "*" } }).events[1])
            local r = hub.webhooks.rotate_secret(w.id)
            print("rotated", r.id == w.id, tostring(r.signing_secret), tostring(r.previous_secret_expires_at ~= nil))
            local t = hub.webhooks.test(w.id)
            print("test", t.delivery_id:sub(1, 4))
            local d = hub.webhooks.deliveries(w.id):collect()
            print("deliveries", #d, d[1].event_type)
            print("redeliver", hub.webhooks.redeliver(w.id, t.delivery_id))
            print("deleted", hub.webhooks.delete(w.id))
            local ok, err = pcall(hub.webhooks.get, w.id)
            print("gone", err.code)
            """))
        let output = MemoryOutput()
        let outcome = try h.execute(prepared, try h.jobs, output: output)
        XCTAssertNil(outcome.failure, outcome.failure?.message ?? "")
        XCTAssertEqual(output.lines, [
            "created\twhk_\tnil\ttrue\thealthy", "listed\t1", "got\thttp://127.0.0.1:9/hooks", "updated\t*",
            "rotated\ttrue\tnil\ttrue", "test\tdlv_", "deliveries\t1\twebhook.test", "redeliver\ttrue", "deleted\ttrue",
            "gone\twebhook_not_found",
        ])
        let writes = try h.journal.writes(runID: outcome.runID)
        XCTAssertEqual(writes.count, 6)
        for w in writes { XCTAssertFalse((w.responseJSON ?? "").contains("whsec_"), w.responseJSON ?? "") }
        XCTAssertFalse(output.lines.joined().contains("whsec_"))
    }

    func testWebhooksNeedTheDeclaredPermission() throws {
        let h = try GatingTests.Harness()
        let prepared = try h.recipe("hooks.lua", Self.recipe(needs: "users.list", """
            hub.webhooks.list()
            """))
        let outcome = try h.execute(prepared, try h.jobs)
        XCTAssertEqual(outcome.failure?.structured?["code"].stringValue, "permission_not_declared")
    }
}
