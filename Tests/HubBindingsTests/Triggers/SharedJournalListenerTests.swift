import Foundation
import HTTPKit
import HubClient
import ScriptHost
import XCTest
import TestSupport
@testable import HubBindings

/// A trigger executor double that blocks each run until released.
final class BlockingExecutor: TriggerExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var started: [String] = []
    private var open = false

    func execute(_ trigger: ConfiguredTrigger, event: TriggerEventRecord, value: ScriptValue) -> FireResult {
        condition.withLock {
            started.append(event.runID)
            condition.broadcast()
            while !open { condition.wait() }
        }
        return .succeeded
    }

    func release() { condition.withLock { open = true; condition.broadcast() } }
    var runs: [String] { condition.withLock { started } }
}

/// Listeners on two hosts (replicas) sharing one PostgreSQL journal: an event runs on
/// one of them; a redelivery to the other while it runs leaves it be.
final class SharedJournalListenerTests: XCTestCase {
    let now = Date(timeIntervalSince1970: 1_796_048_553)
    let trigger = ConfiguredTrigger(name: "offboard", on: ["user.suspended"], recipe: URL(fileURLWithPath: "/tmp/r.lua"),
                                    profile: nil, secret: "webhooks/hub")

    /// A signed delivery of event `wev_1` (as `TriggerListenerTests` makes them).
    func delivery() -> HTTPRequestMessage {
        let body = Data(#"{"id":"wev_1","type":"user.suspended","data":{"user_id":"usr_ada"}}"#.utf8)
        let t = Int(now.timeIntervalSince1970)
        var h = HTTPHeaders()
        h.add("Substratal-Signature", "t=\(t),v1=" + WebhookSignature.hex(secret: TriggerListenerTests.secret, timestamp: t, body: body))
        return HTTPRequestMessage(method: "POST", target: "/hooks", headers: h, body: body)
    }

    func waitFor(_ condition: () -> Bool) {
        let deadline = Date().addingTimeInterval(10)
        while !condition() && Date() < deadline { usleep(10_000) }
    }

    func testARedeliveryToAnotherReplicaWhileTheEventRunsRunsNothingThere() throws {
        let location = JournalLocation.postgres(try TestPostgres.freshSchema(TestPostgres.requiredBaseURL()))
        let (journalA, journalB) = (try Journal(location), try Journal(location))
        let (executorA, executorB) = (BlockingExecutor(), BlockingExecutor())
        let logB = LockedLines()
        func make(_ journal: Journal, _ executor: BlockingExecutor, _ host: String) -> TriggerListener {
            let now = self.now
            let listener = TriggerListener(config: TriggersConfig(source: nil, triggers: [trigger]), journal: journal,
                                           secrets: FixedSecrets(["webhooks/hub": TriggerListenerTests.secret]),
                                           executor: executor, clock: { now })
            listener.locks = journal.runLocks(state: StateDirectory(explicit: NSTemporaryDirectory() + "listen-\(host)-\(UUID())"))
            return listener
        }
        let a = make(journalA, executorA, "a"), b = make(journalB, executorB, "b")
        b.onLog = { logB.add($0) }
        try a.start()
        try b.start()
        XCTAssertEqual(a.handle(delivery()).status, 202)
        waitFor { executorA.runs == ["offboard@wev_1"] }
        XCTAssertEqual(b.handle(delivery()).status, 202)   // the Hub redelivers to the other replica
        waitFor { logB.all.contains { $0.contains("nothing runs here") } }
        XCTAssertEqual(try journalB.triggerEvents("wev_1").first?.status, .running, "the other replica left it be")
        executorA.release()
        executorB.release()
        waitFor { (try? journalB.triggerEvents("wev_1").first?.status) == .succeeded }
        a.stopAndWait()
        b.stopAndWait()
        XCTAssertEqual(executorB.runs, [])
        let host = ProcessInfo.processInfo.hostName.prefix(30)
        XCTAssertEqual(logB.all, ["offboard@wev_1 redelivered, resuming\n",
                                  "offboard@wev_1 is running in process \(getpid()) on \(host): nothing runs here\n"])
        let row = try XCTUnwrap(journalA.triggerEvents("wev_1").first)
        XCTAssertEqual(row.status, .succeeded)
        XCTAssertEqual(row.deliveries, 2)
    }
}

final class LockedLines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func add(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}
