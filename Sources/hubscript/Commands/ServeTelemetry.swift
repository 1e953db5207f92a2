import Foundation
import HTTPKit
import HubClient
import RunJournal
import Scheduler
import Telemetry
import Automation
import Configuration
import Synchronization

/// The operator endpoints of a serving command (`listen`, `jobs serve`): its metrics,
/// made on a registry the command owns, and the `/healthz`, `/readyz` and `/metrics`
/// handlers over them (docs/operations.md, "Health and metrics").
///
/// Readiness: the journal answers a cheap query within 2 s (`JournalHealth`, on a
/// journal of its own, so a slow run never delays a probe), and each check the command
/// adds (the scheduler's loop runs, the listener takes events) holds.
final class ServeTelemetry: Sendable {
    let metrics: ServiceMetrics
    private let checks: Mutex<[ReadinessCheck]>

    /// - Parameters:
    ///   - journal: a journal of its own, for the probe and the scrape-time gauges.
    ///   - kinds: the runs the command starts (`job`, `trigger`).
    init(journal: Journal, state: StateDirectory, kinds: [String]) {
        let registry = MetricsRegistry()
        metrics = ServiceMetrics(registry: registry, kinds: kinds)
        let health = JournalHealth(journal: journal, runFolder: (try? state.folderPath("runs")).map { URL(fileURLWithPath: $0, isDirectory: true) })
        health.install(on: registry)
        checks = Mutex([health.readinessCheck])
    }

    /// Adds a readiness condition (checked after the journal's, in the order added).
    func require(_ name: String, _ check: @escaping @Sendable () -> String?) {
        checks.withLock { $0.append(ReadinessCheck(name, check)) }
    }

    /// The three endpoints with the checks added so far and later.
    var endpoints: HealthEndpoints {
        HealthEndpoints(registry: metrics.registry, readiness: [ReadinessCheck("all") { [self] in
            for check in checks.withLock({ $0 }) {
                if let reason = check.check() { return reason }
            }
            return nil
        }])
    }

    /// A handler for a server that serves only the endpoints: any other path is `404`.
    var handler: HTTPServer.Handler {
        let endpoints = endpoints
        return { request in
            endpoints.respond(to: request) ?? HTTPResponseMessage(
                status: 404, headers: ["Content-Type": "text/plain; charset=utf-8"],
                body: Data("not found: this server answers GET /healthz, /readyz and /metrics\n".utf8))
        }
    }

    /// Hears the Hub client's answers and rate-limit waits (`ServiceMetrics.hubObserver`).
    var hubObserver: @Sendable (HubClientEvent) -> Void { metrics.hubObserver }

    /// Counts a fire's final record (`ServiceMetrics.recordFire`).
    func recordFire(_ record: FireRecord, jobs: JobsConfig) {
        metrics.recordFire(record, jobs: jobs)
    }

    /// Counts one delivery of the webhook receiver.
    func recordDelivery(_ outcome: DeliveryOutcome) {
        metrics.recordDelivery(outcome)
    }
}

extension ListenAddress {
    /// `--http`'s value: `PORT` (on 127.0.0.1), `ADDRESS:PORT` or `[IPv6]:PORT`, the
    /// address an IP literal (or `localhost`) as `--bind` takes it.
    static func endpoint(_ text: String, option: String) throws -> ListenAddress {
        let usage = "\(option) takes PORT, ADDRESS:PORT or [IPv6]:PORT, such as 127.0.0.1:9464 or 0.0.0.0:9464, got '\(text)'"
        if let port = UInt16(text) { return try ListenAddress(bind: nil, port: port) }
        var host: Substring
        let portText: Substring
        if text.hasPrefix("["), let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") {
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else if let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") {
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        } else {
            throw UsageError(usage)
        }
        guard let port = UInt16(portText), !host.isEmpty else { throw UsageError(usage) }
        if host == "localhost" { host = "127.0.0.1" }
        guard HTTPServer.isAddressLiteral(String(host)) else { throw UsageError(usage) }
        return try ListenAddress(bind: String(host), port: port)
    }
}
