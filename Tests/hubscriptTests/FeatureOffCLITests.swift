import Foundation
import XCTest

/// A switched-off Hub feature (501, docs/errors.md) end to end: `hubscript sandbox serve --faults unimplemented=webhooks` is a
/// Hub without webhooks. A recipe calling `hub.webhooks.*` many times gets one warning on
/// stderr, empty lists and nil, and succeeds; the Hub sees one webhook request only.
final class FeatureOffCLITests: XCTestCase {
    static let recipe = """
        recipe { name = "hooks", version = "1.0.0", description = "Test fixture.", needs = { "webhooks.manage", "users.list" } }
        for i = 1, 5 do
          print(i, hub.webhooks.list():count(), tostring(hub.webhooks.get("whk_" .. i)))
        end
        print("create", tostring(hub.webhooks.create { url = "http://127.0.0.1:9/h", events = { "*" } }))
        print("available", hub.available("webhooks"))
        print("user", hub.users.get("usr_ada").id)
        """

    func testA501FeatureWarnsOnceAndTheRecipeGoesOn() throws {
        let cli = try CLIHarness(testCase: self)
        let hubState = cli.root.appendingPathComponent("hub-state")
        try cli.resetSandbox(state: hubState)
        let server = try ServedSandbox(cli, state: hubState, faults: "unimplemented=webhooks")
        defer { server.stop() }
        let recipe = try cli.file("hooks.lua", Self.recipe)
        let r = try cli.run([recipe, "--config", server.config, "--profile", "served", "--quiet"], expect: 0)
        XCTAssertEqual(r.stdout, """
            1\t0\tnil
            2\t0\tnil
            3\t0\tnil
            4\t0\tnil
            5\t0\tnil
            create\tnil
            available\tfalse
            user\tusr_ada

            """)
        let stderr = r.stderr.replacingOccurrences(of: #"run_[0-9TZ]+_[0-9a-f]+"#, with: "RUN", options: .regularExpression)
            .replacingOccurrences(of: #"in [0-9.]+ s\n"#, with: "in T s\n", options: .regularExpression)
        // Two reads reached the Hub: the webhook list that found out, and the user.
        XCTAssertEqual(stderr, """
            warning: the Hub does not offer 'webhooks' (HTTP 501 not_implemented); calls to it are off for this run.
            done: run RUN — 2 reads, 0 writes in T s

            """)
        let audit = try SandboxReader(served: server.url).all("/audit-events", "action=webhook.created")
        XCTAssertEqual(audit.count, 0)
    }
}
