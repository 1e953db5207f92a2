import Foundation
import HTTPKit
import ScriptHost
import XCTest
@testable import RunJournal
@testable import Secrets
@testable import RecipeModules
@testable import Configuration
@testable import Automation

/// A trigger executor double: counts runs per run id, optionally failing or blocking.
final class CountingExecutor: TriggerExecutor, @unchecked Sendable {
    private let lock = NSLock()
    private var runs: [String: Int] = [:]
    private var events: [ScriptValue] = []
    var exitCode: Int32 = 0

    func execute(_ trigger: ConfiguredTrigger, event: TriggerEventRecord, value: ScriptValue) -> FireResult {
        lock.withLock {
            runs[event.runID, default: 0] += 1
            events.append(value)
            return FireResult(exitCode: exitCode, message: exitCode == 0 ? nil : "boom")
        }
    }

    var counts: [String: Int] { lock.withLock { runs } }
    var values: [ScriptValue] { lock.withLock { events } }
}

final class TriggerListenerTests: XCTestCase {
    static let secret = "whsec_test_secret"
    let now = Date(timeIntervalSince1970: 1_796_048_553)

    func trigger(_ name: String = "offboard", on: [String] = ["user.suspended"]) -> ConfiguredTrigger {
        ConfiguredTrigger(name: name, on: on, recipe: URL(fileURLWithPath: "/tmp/r.lua"), profile: nil, secret: "webhooks/hub")
    }

    func listener(_ journal: Journal, _ executor: CountingExecutor, triggers: [ConfiguredTrigger]? = nil) -> TriggerListener {
        let now = self.now
        return TriggerListener(config: TriggersConfig(source: nil, triggers: triggers ?? [trigger()]), journal: journal,
                               secrets: FixedSecrets(["webhooks/hub": Self.secret]), executor: executor, clock: { now })
    }

    func delivery(id: String = "wev_1", type: String = "user.suspended", secret: String = secret, age: Int = 0,
                  signature: String? = nil) -> HTTPRequestMessage {
        let body = Data(#"{"id":"\#(id)","type":"\#(type)","data":{"user_id":"usr_ada"}}"#.utf8)
        let t = Int(now.timeIntervalSince1970) - age
        var h = HTTPHeaders()
        h.add("Substratal-Signature", signature ?? "t=\(t),v1=" + WebhookSignature.hex(secret: secret, timestamp: t, body: body))
        return HTTPRequestMessage(method: "POST", target: "/hooks", headers: h, body: body)
    }

    func waitFor(_ condition: () -> Bool) {
        let deadline = Date().addingTimeInterval(10)
        while !condition() && Date() < deadline { usleep(10_000) }
    }

    func testBadSignaturesAndStaleTimestampsAre401AndRecordNothing() throws {
        let journal = try Journal.inMemory()
        let executor = CountingExecutor()
        let l = listener(journal, executor)
        try l.start()
        defer { l.stopAndWait() }
        XCTAssertEqual(l.handle(delivery(secret: "whsec_other")).status, 401)
        XCTAssertEqual(l.handle(delivery(age: 301)).status, 401)
        XCTAssertEqual(l.handle(delivery(age: -301)).status, 401)
        XCTAssertEqual(l.handle(delivery(signature: "")).status, 401)
        XCTAssertEqual(l.handle(delivery(signature: "t=1,v1=zz")).status, 401)
        var tampered = delivery()
        tampered.body.append(contentsOf: Array(" ".utf8))
        XCTAssertEqual(l.handle(tampered).status, 401)
        XCTAssertEqual(l.handle(delivery(age: 299)).status, 202)
        waitFor { executor.counts.count == 1 }
        XCTAssertEqual(executor.counts, ["offboard@wev_1": 1])
        XCTAssertEqual(try journal.triggerEvents("wev_1").count, 1)
    }

    func testTheSameEventRunsOnceHoweverOftenItArrives() throws {
        let journal = try Journal.inMemory()
        let executor = CountingExecutor()
        let l = listener(journal, executor)
        try l.start()
        defer { l.stopAndWait() }
        for _ in 0..<3 { XCTAssertEqual(l.handle(delivery()).status, 202) }
        waitFor { try! journal.triggerEvents("wev_1").first?.status == .succeeded }
        XCTAssertEqual(l.handle(delivery()).status, 202)
        Thread.sleep(forTimeInterval: 0.1)
        XCTAssertEqual(executor.counts, ["offboard@wev_1": 1])
        let row = try XCTUnwrap(journal.triggerEvents("wev_1").first)
        XCTAssertEqual(row.deliveries, 4)
        XCTAssertEqual(row.runID, "offboard@wev_1")
        XCTAssertEqual(executor.values.first?["data"]["user_id"], "usr_ada")
        // Not subscribed: answered, nothing recorded.
        XCTAssertEqual(l.handle(delivery(id: "wev_2", type: "role.assigned")).status, 200)
        XCTAssertEqual(try journal.triggerEvents("wev_2"), [])
    }

    /// The window the full suite once hit: a redelivery read the event as unfinished,
    /// then the run succeeded and left the queue before the delivery queued it.
    func testADeliveryReadBeforeTheRunFinishedDoesNotRunItAgain() throws {
        let journal = try Journal.inMemory()
        let executor = CountingExecutor()
        let l = listener(journal, executor)
        try l.start()
        defer { l.stopAndWait() }
        let stale = try journal.recordTriggerEvent(eventID: "wev_1", trigger: "offboard", eventType: "user.suspended",
                                                   body: "{}", runID: "offboard@wev_1").record
        try journal.setTriggerEvent("wev_1", trigger: "offboard", status: .succeeded)
        XCTAssertFalse(l.enqueue(trigger(), stale))
        Thread.sleep(forTimeInterval: 0.1)
        XCTAssertEqual(executor.counts, [:])
        try journal.setTriggerEvent("wev_1", trigger: "offboard", status: .failed)
        XCTAssertTrue(l.enqueue(trigger(), stale))
        waitFor { executor.counts.count == 1 }
        XCTAssertEqual(executor.counts, ["offboard@wev_1": 1])
    }

    func testAFailedRunIsResumedByARedeliveryAndUnfinishedOnesAtStart() throws {
        let journal = try Journal.inMemory()
        let executor = CountingExecutor()
        executor.exitCode = 1
        let l = listener(journal, executor, triggers: [trigger(on: ["user.*"])])
        try l.start()
        XCTAssertEqual(l.handle(delivery()).status, 202)
        waitFor { try! journal.triggerEvents("wev_1").first?.status == .failed }
        executor.exitCode = 0
        XCTAssertEqual(l.handle(delivery()).status, 202)
        waitFor { try! journal.triggerEvents("wev_1").first?.status == .succeeded }
        XCTAssertEqual(executor.counts, ["offboard@wev_1": 2])
        l.stopAndWait()
        // A listener that died after journalling: the next one resumes the event.
        _ = try journal.recordTriggerEvent(eventID: "wev_9", trigger: "offboard", eventType: "user.suspended",
                                           body: #"{"id":"wev_9","type":"user.suspended"}"#, runID: "offboard@wev_9")
        let next = listener(journal, executor, triggers: [trigger(on: ["user.*"])])
        try next.start()
        waitFor { executor.counts["offboard@wev_9"] == 1 }
        next.stopAndWait()
        XCTAssertEqual(executor.counts["offboard@wev_9"], 1)
    }

    func testTriggersConfigIsReadWithExactErrors() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hubscript-triggers-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try "recipe { name = \"r\", version = \"1.0.0\", description = \"r\" }".write(
            to: folder.appendingPathComponent("r.lua"), atomically: true, encoding: .utf8)
        func load(_ triggers: String) throws -> TriggersConfig {
            let url = folder.appendingPathComponent("config.lua")
            try "return { profiles = { prod = { sandbox = true } }, triggers = \(triggers) }".write(to: url, atomically: true, encoding: .utf8)
            return try LoadedConfiguration.load(explicit: url.path).triggers
        }
        let ok = try load(#"{ off = { on = { "user.suspended", "role.*" }, recipe = "r.lua", profile = "prod", secret = "webhooks/hub" } }"#)
        XCTAssertEqual(ok.triggers.map(\.name), ["off"])
        XCTAssertTrue(ok.triggers[0].matches("role.assigned"))
        XCTAssertFalse(ok.triggers[0].matches("user.reactivated"))
        XCTAssertNil(ok.triggers[0].allow)
        let bounded = try load(#"{ off = { on = { "*" }, recipe = "r.lua", secret = "s", allow = { "notifications.send" } } }"#)
        XCTAssertEqual(bounded.triggers[0].allow, ["notifications.send"])
        XCTAssertEqual(try load(#"{ off = { on = { "*" }, recipe = "r.lua", secret = "s", allow = {} } }"#).triggers[0].allow, [])
        XCTAssertThrowsError(try load(#"{ off = { on = { "*" }, recipe = "r.lua", secret = "s", allow = { "notifications.sned" } } }"#)) { error in
            XCTAssertTrue("\(error)".hasSuffix(#"trigger "off": allow: unknown permission 'notifications.sned' (did you mean 'notifications.send'?) (known permissions: "#
                                              + HubGate.knownPermissions.joined(separator: ", ") + ")"), "\(error)")
        }
        let path = folder.appendingPathComponent("config.lua").path
        let cases: [(String, String)] = [
            (#""x""#, "triggers must be a table of name = { on = {…}, recipe = …, secret = … }"),
            (#"{ off = { on = {}, recipe = "r.lua", secret = "s" } }"#,
             #"trigger "off": on must be a non-empty list of event types, e.g. {"user.suspended", "role.*"}"#),
            (#"{ off = { on = { "User!" }, recipe = "r.lua", secret = "s" } }"#,
             "trigger \"off\": on: 'User!' is not an event type (such as user.suspended), a prefix (role.*) or *"),
            (#"{ off = { on = { "*" }, recipe = "nope.lua", secret = "s" } }"#,
             "trigger \"off\": recipe \"nope.lua\" is not a file (looked for \(folder.appendingPathComponent("nope.lua").standardizedFileURL.path))"),
            (#"{ off = { on = { "*" }, recipe = "r.lua" } }"#,
             #"trigger "off": secret (the vault entry holding the webhook's signing secret, e.g. "webhooks/hub") is required"#),
            (#"{ off = { on = { "*" }, recipe = "r.lua", secret = "s", profile = "dev" } }"#,
             #"trigger "off": profile "dev" is not one of the profiles (prod, or 'sandbox')"#),
            (#"{ off = { on = { "*" }, recipe = "r.lua", secret = "s", when = 1 } }"#,
             "trigger \"off\": unknown key 'when' (allowed: on, recipe, profile, secret, allow)"),
            (#"{ off = { on = { "*" }, recipe = "r.lua", secret = "s", allow = "users.list" } }"#,
             #"trigger "off": allow must be a list of permission names, e.g. {"users.list"}"#),
            (#"{ off = { on = { "*" }, recipe = "r.lua", secret = "s", allow = { "users.list", 3 } } }"#,
             #"trigger "off": allow must be a list of permission names, e.g. {"users.list"}"#),
        ]
        for (triggers, message) in cases {
            XCTAssertThrowsError(try load(triggers), triggers) { error in
                XCTAssertEqual("\(error)", "config \(path): \(message)", triggers)
            }
        }
    }
}
