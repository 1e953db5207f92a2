import Foundation
import HTTPKit
import HubSandbox
import XCTest

extension ListenCLITests {
    /// `listen` reads its configuration once, as it starts, and runs every delivery with
    /// it: the file broken while it listens changes nothing (a changed file takes effect
    /// at the next start), and a trigger's library recipe is still found.
    func testDeliveriesRunWithTheConfigurationReadAtTheStart() throws {
        let s = try prepare()
        defer { s.sandbox.stop() }
        try s.cli.file("shared/ops/on_lib.lua", """
            recipe {
              name = "on-lib", version = "1.0.0", description = "Test fixture: a library's trigger recipe.",
              params = { event = { type = "table", required = true } }, needs = { "notifications.send" },
            }
            hub.notifications.send("app_hub", { user_id = params.event.data.user_id, title = "Suspended 1",
                                                body = "Event " .. params.event.id, category = "security" })
            """)
        try s.cli.file("hubscript.config.lua", """
            return {
              profiles = { lab = { hub_url = "\(s.hubURL)", api_key = "\(SandboxFixtures.jobsKeySecret)", api_key_id = "key_jobs" } },
              libraries = { ops = "shared/ops" },
              triggers = { told = { on = { "user.suspended" }, recipe = "ops:on_lib", profile = "lab", secret = "webhooks/hub" } },
            }
            """)
        XCTAssertEqual(try s.cli.run(["trust", "--config", s.config]).status, 0)
        let opens = try FileOpenCounter(s.config)
        let (listener, listenURL) = try startListener(s)
        defer { listener.stop() }
        let (_, secret) = try subscribe(s, listenURL)
        XCTAssertEqual(opens.opens(), 1, "listen opens its configuration once, as it starts")
        try s.cli.file("hubscript.config.lua", "return { triggers = ")
        XCTAssertEqual(try s.cli.run(["runs", "list", "--config", s.config]).status, 2, "the file is broken")
        _ = opens.opens()   // the test's own write and runs list's read
        let body = #"{"id":"wev_once0001","type":"user.suspended","api_version":"2026-10-05","created_at":"2026-01-01T00:00:00Z","test_mode":true,"data":{"user_id":"usr_ada"}}"#
        let now = Int(Date().timeIntervalSince1970)
        let signature = "t=\(now),v1=" + WebhookSignature.hex(secret: secret, timestamp: now, body: Data(body.utf8))
        XCTAssertEqual(try post(listenURL, body: body, signature: signature), 202)
        XCTAssertTrue(waitUntil { listener.output.contains("told@wev_once0001 succeeded") || listener.output.contains("told@wev_once0001 failed") },
                      listener.output)
        XCTAssertTrue(listener.output.contains("told@wev_once0001 succeeded in "), listener.output)
        XCTAssertEqual(try notified(s), ["usr_ada": 1], listener.output)
        XCTAssertEqual(opens.opens(), 0, "a delivery's run does not read the file again")
    }
}
