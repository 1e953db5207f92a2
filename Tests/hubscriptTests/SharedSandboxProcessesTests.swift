import Foundation
import HTTPKit
import HubSandbox
import XCTest

/// Two `hubscript sandbox serve` processes on one state directory share one sandbox
/// file. The same Idempotency-Key sent to both at the same moment runs once: the
/// store's transaction makes the lookup and the reservation one step across processes.
final class SharedSandboxProcessesTests: XCTestCase {
    func testTwoServersOfOneFileNeverBothRunAKey() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.run(["sandbox", "reset", "--users", "5", "--audit-events", "10"], expect: 0)
        let first = try ServedSandbox(cli, state: cli.stateDir, faults: "none")
        let second = try ServedSandbox(cli, state: cli.stateDir, faults: "none")
        defer { first.stop(); second.stop() }
        let keys = 150
        let answers = Answers()
        for k in 0..<keys {
            let start = DispatchSemaphore(value: 0)
            let group = DispatchGroup()
            for url in [first.url, second.url] {
                group.enter()
                Thread.detachNewThread {
                    start.wait()
                    answers.add(k, Self.send(url, key: "race-\(k)"))
                    group.leave()
                }
            }
            start.signal()
            start.signal()
            group.wait()
        }
        let sent = try SandboxReader(served: first.url).all("/audit-events", "action=notification.sent")
        for k in 0..<keys {
            let ran = sent.filter { (($0["after"] as? [String: Any])?["title"] as? String) == "race-\(k)" }.count
            XCTAssertEqual(ran, 1, "race-\(k) ran \(ran) times; answers \(answers.of(k))")
            let pair = answers.of(k)
            XCTAssertEqual(pair.filter { $0 == "201" }.count, 1, "\(pair)")
            XCTAssertTrue(pair.allSatisfy { ["201", "201 replayed", "409 idempotency_key_in_flight"].contains($0) }, "\(pair)")
        }
    }

    /// One send to usr_ada; the answer as `201`, `201 replayed` or `<status> <code>`.
    static func send(_ url: String, key: String) -> String {
        let port = UInt16(url.split(separator: ":").last ?? "") ?? 0
        var headers = HTTPHeaders()
        headers.add("Substratal-Version", "1")
        headers.add("Authorization", "Bearer \(SandboxFixtures.jobsKeySecret)")
        headers.add("Content-Type", "application/json")
        headers.add("Idempotency-Key", key)
        let body = #"{"user_id":"usr_ada","title":"\#(key)","body":"b","category":"test.race"}"#
        do {
            let r = try LoopbackHTTPClient().perform(HTTPRequestMessage(method: "POST", target: "/applications/app_hub/notifications",
                                                                        headers: headers, body: Data(body.utf8)),
                                                     host: "127.0.0.1", port: port, timeout: 10)
            if r.status == 201 { return r.headers["Idempotent-Replayed"] == "true" ? "201 replayed" : "201" }
            let code = (try? JSONSerialization.jsonObject(with: r.body) as? [String: Any])
                .flatMap { ($0["error"] as? [String: Any])?["code"] as? String } ?? ""
            return "\(r.status) \(code)"
        } catch {
            return "\(error)"
        }
    }
}

private final class Answers: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Int: [String]] = [:]
    func add(_ k: Int, _ answer: String) { lock.withLock { items[k, default: []].append(answer) } }
    func of(_ k: Int) -> [String] { lock.withLock { items[k] ?? [] } }
}
