import Foundation
import HTTPKit
import XCTest
@testable import RunJournal
@testable import Secrets
@testable import Configuration
@testable import Automation

/// Each delivery is reported once, with how it was answered (what `/metrics` counts).
extension TriggerListenerTests {
    final class Outcomes: @unchecked Sendable {
        private let lock = NSLock()
        private var seen: [DeliveryOutcome] = []
        func add(_ o: DeliveryOutcome) { lock.withLock { seen.append(o) } }
        var all: [DeliveryOutcome] { lock.withLock { seen } }
    }

    func testEveryDeliveryIsReportedOnceWithItsOutcome() throws {
        let journal = try Journal.inMemory()
        let l = listener(journal, CountingExecutor())
        let outcomes = Outcomes()
        l.onDelivery = { outcomes.add($0) }
        try l.start()
        defer { l.stopAndWait() }
        XCTAssertEqual(l.handle(delivery()).status, 202)
        XCTAssertEqual(l.handle(delivery()).status, 202)
        XCTAssertEqual(l.handle(delivery(secret: "whsec_other")).status, 401)
        XCTAssertEqual(l.handle(delivery(age: 400)).status, 401)
        XCTAssertEqual(l.handle(delivery(id: "wev_2", type: "role.assigned")).status, 200)
        let body = Data(#"{"not":"an event"}"#.utf8)
        let t = Int(now.timeIntervalSince1970)
        var headers = HTTPHeaders()
        headers.add("Substratal-Signature", "t=\(t),v1=" + WebhookSignature.hex(secret: Self.secret, timestamp: t, body: body))
        XCTAssertEqual(l.handle(HTTPRequestMessage(method: "POST", target: "/hooks", headers: headers, body: body)).status, 400)
        XCTAssertEqual(l.handle(HTTPRequestMessage(method: "GET", target: "/hooks")).status, 405)
        XCTAssertEqual(outcomes.all, [.accepted, .duplicate, .rejectedSignature, .rejectedSignature, .ignored, .malformed])

        // A receiver that cannot read its signing secret answers 500: an error.
        let broken = TriggerListener(config: TriggersConfig(source: nil, triggers: [trigger()]), journal: journal,
                                     secrets: FixedSecrets([:]), executor: CountingExecutor(), clock: { [now] in now })
        let brokenOutcomes = Outcomes()
        broken.onDelivery = { brokenOutcomes.add($0) }
        XCTAssertEqual(broken.handle(delivery()).status, 500)
        XCTAssertEqual(brokenOutcomes.all, [.error])
    }

    func testTheListenerSaysWhetherItTakesEvents() throws {
        let l = listener(try Journal.inMemory(), CountingExecutor())
        XCTAssertFalse(l.isRunning, "not started")
        try l.start()
        XCTAssertTrue(l.isRunning)
        l.stopAndWait()
        XCTAssertFalse(l.isRunning, "stopped")
    }
}
