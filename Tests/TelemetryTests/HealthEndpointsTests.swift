import Foundation
import HTTPKit
import Telemetry
import XCTest

/// `/healthz`, `/readyz` and `/metrics` as a load balancer, a Kubernetes probe and
/// Prometheus meet them; every other path is left to the command's own handler.
final class HealthEndpointsTests: XCTestCase {
    final class Flag: @unchecked Sendable {
        let lock = NSLock()
        var reason: String?
        func set(_ r: String?) { lock.withLock { reason = r } }
        func get() -> String? { lock.withLock { reason } }
    }

    func endpoints(_ flag: Flag) -> HealthEndpoints {
        let registry = MetricsRegistry()
        registry.counter("app_a_total", help: "A.").increment()
        return HealthEndpoints(registry: registry, readiness: [
            ReadinessCheck("journal") { flag.get() },
            ReadinessCheck("never") { "the second check is not reached while the first fails" },
        ])
    }

    func get(_ e: HealthEndpoints, _ target: String, method: String = "GET") -> (Int, String, HTTPHeaders)? {
        e.respond(to: HTTPRequestMessage(method: method, target: target)).map { ($0.status, String(decoding: $0.body, as: UTF8.self), $0.headers) }
    }

    func testEachPathAnswersItsOwnBody() throws {
        let flag = Flag()
        flag.set("the journal did not answer within 2 s")
        let e = endpoints(flag)
        let health = try XCTUnwrap(get(e, "/healthz"))
        XCTAssertEqual(health.0, 200)
        XCTAssertEqual(health.1, "ok\n")
        XCTAssertEqual(health.2["Cache-Control"], "no-store")
        let ready = try XCTUnwrap(get(e, "/readyz"))
        XCTAssertEqual(ready.0, 503)
        XCTAssertEqual(ready.1, "not ready: the journal did not answer within 2 s\n")
        flag.set(nil)
        let readyAgain = try XCTUnwrap(get(e, "/readyz"))
        XCTAssertEqual(readyAgain.0, 503)
        XCTAssertEqual(readyAgain.1, "not ready: the second check is not reached while the first fails\n")
        let metrics = try XCTUnwrap(get(e, "/metrics?x=1"))
        XCTAssertEqual(metrics.0, 200)
        XCTAssertEqual(metrics.2["Content-Type"], "text/plain; version=0.0.4; charset=utf-8")
        XCTAssertEqual(metrics.1, "# HELP app_a_total A.\n# TYPE app_a_total counter\napp_a_total 1\n")
    }

    func testReadyWhenEveryCheckHolds() throws {
        let e = HealthEndpoints(registry: MetricsRegistry(), readiness: [ReadinessCheck("x") { nil }])
        let ready = try XCTUnwrap(get(e, "/readyz"))
        XCTAssertEqual(ready.0, 200)
        XCTAssertEqual(ready.1, "ready\n")
    }

    func testAReasonIsOneLine() throws {
        let e = HealthEndpoints(registry: MetricsRegistry(), readiness: [ReadinessCheck("x") { "a\nb\r\u{1B}[31mc" + String(repeating: "z", count: 400) }])
        let ready = try XCTUnwrap(get(e, "/readyz"))
        XCTAssertEqual(ready.1.filter { $0 == "\n" }.count, 1)
        XCTAssertTrue(ready.1.hasPrefix("not ready: a b  [31mc"))
        XCTAssertLessThanOrEqual(ready.1.count, 300 + "not ready: \n".count)
    }

    func testOtherPathsAreLeftToTheCaller() {
        let e = endpoints(Flag())
        for target in ["/", "/hooks", "/healthz/x", "/metricsx", "/%2Fhealthz"] {
            XCTAssertNil(get(e, target), target)
        }
    }

    func testOtherMethodsAre405WithAllow() throws {
        let e = endpoints(Flag())
        for method in ["POST", "PUT", "DELETE"] {
            let answer = try XCTUnwrap(get(e, "/metrics", method: method))
            XCTAssertEqual(answer.0, 405)
            XCTAssertEqual(answer.2["Allow"], "GET")
            XCTAssertEqual(answer.1, "/metrics answers GET only\n")
        }
    }
}
