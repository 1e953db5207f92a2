import Foundation
import HTTPKit
import HubClient
import RunJournal
import Scheduler
import Telemetry
import Automation
import Configuration

/// The operator endpoints of a serving command (`listen`, `jobs serve`): its metrics,
/// made on a registry the command owns, and the `/healthz`, `/readyz` and `/metrics`
/// handlers over them (docs/operations.md, "Health and metrics").
///
/// Readiness: the journal answers a cheap query within `journalDeadline` (on its own
/// connection, so a slow run never delays a probe), and each check the command adds
/// (the scheduler's loop runs, the listener takes events) holds.
final class ServeTelemetry: @unchecked Sendable {
    /// How long `/readyz` waits for the journal.
    static let journalDeadline: TimeInterval = 2

    let metrics: ServiceMetrics
    private let lock = NSLock()
    /// Guarded by `lock`.
    private var checks: [ReadinessCheck]

    /// - Parameters:
    ///   - journal: a journal of its own, for the probe and the scrape-time gauges.
    ///   - kinds: the runs the command starts (`job`, `trigger`).
    init(journal: Journal, state: StateDirectory, kinds: [String]) {
        let registry = MetricsRegistry()
        metrics = ServiceMetrics(registry: registry, kinds: kinds)
        let probe = DeadlineProbe("the journal", deadline: Self.journalDeadline) { try journal.checkReachable() }
        checks = [ReadinessCheck("journal") { probe.probe() }]
        let runFolder = (try? state.folderPath("runs")).map { FolderSize(folder: URL(fileURLWithPath: $0, isDirectory: true)) }
        struct Unreachable: Error {}
        StorageGauges(journal: {
            // Within the probe's deadline first: a scrape never hangs on a journal that does.
            guard probe.probe() == nil else { throw Unreachable() }
            return StorageGauges.JournalFigures(bytes: try journal.storageBytes(), oldestRunStart: try journal.oldestRunStart())
        }, runFolder: runFolder).install(on: registry)
    }

    /// Adds a readiness condition (checked after the journal's, in the order added).
    func require(_ name: String, _ check: @escaping @Sendable () -> String?) {
        lock.withLock { checks.append(ReadinessCheck(name, check)) }
    }

    /// The three endpoints with the checks added so far and later.
    var endpoints: HealthEndpoints {
        HealthEndpoints(registry: metrics.registry, readiness: [ReadinessCheck("all") { [self] in
            for check in lock.withLock({ checks }) {
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

    /// Hears the Hub client's answers (a `429` counts for its rate class) and its waits
    /// for the rate limit (pass it as a connection's `observe`).
    var hubObserver: @Sendable (HubClientEvent) -> Void {
        let metrics = metrics
        return { event in
            switch event {
            case .answered(let method, let path, let status, _):
                metrics.recordAnswer(status: status, rateClass: RateClass.of(method: method, path: path)?.rawValue)
            case .rateLimitWait(let seconds, let reason):
                metrics.recordWait(seconds: seconds, pacing: reason == .pacing)
            default:
                break
            }
        }
    }

    /// Counts a fire's final record: succeeded, failed, skipped, or the fires of a
    /// missed range (`jobs`: to count each missed scheduled time, capped at 10,000).
    func recordFire(_ record: FireRecord, jobs: JobsConfig) {
        switch record.status {
        case .succeeded, .failed, .skipped:
            metrics.fires.increment(record.job, record.status.rawValue)
        case .missed:
            var count = 1
            if let through = record.missedThrough, through > record.scheduledAt,
               let job = jobs.jobs.first(where: { $0.name == record.job }) {
                count = max(1, job.definition.schedule.fires(in: record.scheduledAt...through).prefix(10_000).reduce(0) { n, _ in n + 1 })
            }
            metrics.fires.increment(record.job, "missed", by: Double(count))
        case .queued, .fired:
            break
        }
    }

    /// Counts one delivery of the webhook receiver.
    func recordDelivery(_ outcome: DeliveryOutcome) {
        metrics.deliveries.increment(outcome.rawValue)
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
