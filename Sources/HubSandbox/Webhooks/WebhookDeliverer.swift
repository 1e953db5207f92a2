import Foundation
import HTTPKit
import SQLiteKit
import Synchronization

/// Posts pending webhook deliveries from the store's outbox on a thread of its own, so a
/// request that caused an event never waits for a receiver. Non-2xx answers and
/// connection failures are retried with a fast sandbox backoff (0.2 s doubling, 6
/// attempts in all, as the real schedule's count); each attempt is recorded on the
/// delivery row. Started by `HubSandbox.startWebhookDelivery()` (`sandbox serve` does).
final class WebhookDeliverer: @unchecked Sendable {
    /// Attempts per delivery: the Hub's schedule makes 6 (docs/webhooks.md, "Delivery").
    static let maxAttempts = 6
    /// The first retry's delay; each further one doubles it.
    static let retryBaseMs = 200
    /// How long the `reorder` fault holds a delivery back, so later events overtake it.
    static let reorderDelayMs = 300
    /// How long a receiver has to answer (the reference's 5 s).
    static let timeout = 5.0

    static func nowMs() -> Int { Int((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

    /// A loopback `http://host:port/path` delivery target.
    struct Target {
        let host: String
        let port: UInt16
        let path: String

        init?(url: String) {
            guard let c = URLComponents(string: url), c.scheme == "http", let host = c.host, c.user == nil,
                  LoopbackHTTPClient.isLoopback(host), let port = c.port, let p = UInt16(exactly: port), p > 0 else { return nil }
            self.host = host
            self.port = p
            let path = c.percentEncodedPath.isEmpty ? "/" : c.percentEncodedPath
            self.path = c.percentEncodedQuery.map { path + "?" + $0 } ?? path
        }
    }

    private struct Due {
        let id: String, webhook: String, eventId: String, type: String, attempt: Int
        let body: String, url: String, secrets: [String]
    }

    private let engine: HubEngine
    private let client = LoopbackHTTPClient(maxIdlePerHost: 2)
    /// Whether the delivery thread runs (or is to stop at its next turn).
    private let running = Mutex(false)
    private let done = DispatchSemaphore(value: 0)

    init(engine: HubEngine) { self.engine = engine }

    func start() {
        let go = running.withLock { running -> Bool in
            if running { return false }
            running = true
            return true
        }
        guard go else { return }
        let thread = Thread { [self] in
            while running.withLock({ $0 }) {
                if !deliverDue() { Thread.sleep(forTimeInterval: 0.05) }
            }
            done.signal()
        }
        thread.name = "hubscript.sandbox.webhooks"
        thread.start()
    }

    /// Stops the delivery thread. With `wait`, returns once its current batch is done;
    /// without, at once (a process about to exit: an attempt cut short is retried once
    /// its claim expires).
    func stop(wait: Bool = true) {
        stop(waitingAtMost: wait ? .infinity : 0)
    }

    /// Stops the delivery thread, waiting at most `seconds` for its current batch (an
    /// attempt in flight then ends, instead of being counted as still pending and cut
    /// short by the process's exit). Returns whether the thread finished in time.
    @discardableResult
    func stop(waitingAtMost seconds: Double) -> Bool {
        let wasRunning = running.withLock { running -> Bool in
            defer { running = false }
            return running
        }
        guard wasRunning, seconds > 0 else { return !wasRunning }
        if seconds == .infinity {
            done.wait()
            return true
        }
        return done.wait(timeout: .now() + seconds) == .success
    }

    /// Sends every due delivery once; false when none was due. With a `deadline`, each
    /// receiver gets at most the time left, and the batch stops when it has passed.
    @discardableResult
    func deliverDue(until deadline: Date? = nil) -> Bool {
        let batch = engine.lock.withLock { (try? engine.db.transaction { try claimDueDeliveries() }) ?? [] }
        for d in batch {
            var timeout = WebhookDeliverer.timeout
            if let deadline {
                timeout = min(timeout, deadline.timeIntervalSinceNow)
                if timeout < 0.05 { break }
            }
            send(d, timeout: timeout)
        }
        return !batch.isEmpty
    }

    /// How long a claimed delivery is reserved for the process that claimed it: its
    /// receiver's timeout and a margin. A process killed mid-send leaves the claim to
    /// expire, and the delivery is sent again (at least once, as the real service).
    static let claimMs = Int(timeout * 1000) + 2_000

    /// The deliveries due now, each claimed (its next attempt moved past the claim), in
    /// the same transaction as the read: two processes on one store file (`sandbox serve`
    /// and an embedded run) never send one attempt twice.
    private func claimDueDeliveries() throws -> [Due] {
        let due = try dueDeliveries()
        let until = WebhookDeliverer.nowMs() + WebhookDeliverer.claimMs
        for d in due { try engine.db.run("UPDATE webhook_deliveries SET next_attempt_ms = ? WHERE id = ?", [.int(until), .text(d.id)]) }
        return due
    }

    /// How many deliveries are still to be attempted (due now or later).
    func pendingCount() -> Int {
        engine.lock.withLock {
            (try? engine.db.first("SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'") { $0.int(0) }) ?? 0
        }
    }

    /// Whether any webhook can produce deliveries.
    func hasWebhooks() -> Bool {
        engine.lock.withLock {
            ((try? engine.db.first("SELECT count(*) FROM webhooks WHERE status <> 'disabled'") { $0.int(0) }) ?? 0) > 0
        }
    }

    private func dueDeliveries() throws -> [Due] {
        var out: [Due] = []
        let nowSeconds = engine.nowSeconds
        try engine.db.query("""
            SELECT d.id, d.webhook_id, d.event_id, d.event_type, d.attempt, e.body, w.url, w.secret, w.previous_secret,
              w.previous_expires_at
            FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id JOIN webhooks w ON w.id = d.webhook_id
            WHERE d.status = 'pending' AND d.next_attempt_ms <= ? ORDER BY d.next_attempt_ms, d.seq LIMIT 20
            """, [.int(WebhookDeliverer.nowMs())]) { s in
            var secrets = [s.text(7)]
            if let previous = s.textOrNil(8), (s.intOrNil(9) ?? 0) > nowSeconds { secrets.append(previous) }
            out.append(Due(id: s.text(0), webhook: s.text(1), eventId: s.text(2), type: s.text(3), attempt: s.int(4) + 1,
                           body: s.text(5), url: s.text(6), secrets: secrets))
        }
        return out
    }

    private func send(_ d: Due, timeout: Double) {
        let body = Data(d.body.utf8)
        let t = engine.nowSeconds
        var status: Int?
        var error: String?
        let started = Date()
        if let target = Target(url: d.url) {
            var h = HTTPHeaders()
            h.add("Content-Type", "application/json")
            h.add("User-Agent", "Substratal-Webhooks/1.0")
            h.add("Substratal-Event-Id", d.eventId)
            h.add("Substratal-Event-Type", d.type)
            h.add("Substratal-Delivery-Id", d.id)
            h.add("Substratal-Delivery-Attempt", String(d.attempt))
            h.add("Substratal-Signature", WebhookSignature.header(secrets: d.secrets, timestamp: t, body: body))
            do {
                let r = try client.perform(HTTPRequestMessage(method: "POST", target: target.path, headers: h, body: body),
                                           host: target.host, port: target.port, timeout: timeout)
                status = r.status
                if !(200...299).contains(r.status) { error = String(decoding: r.body.prefix(1024), as: UTF8.self) }
            } catch let e {
                error = "\(e)"
            }
        } else {
            error = "not a loopback URL"
        }
        let ms = Int(Date().timeIntervalSince(started) * 1000)
        engine.lock.withLock { try? record(d, status: status, error: error, durationMs: ms, at: t) }
    }

    private func record(_ d: Due, status: Int?, error: String?, durationMs: Int, at t: Int) throws {
        let ok = status.map { (200...299).contains($0) } ?? false
        let counts = d.type != "webhook.test"
        let db = engine.db
        if ok {
            try db.run("""
                UPDATE webhook_deliveries SET attempt = ?, status = 'succeeded', response_status = ?, duration_ms = ?, error = NULL,
                  next_attempt_ms = NULL WHERE id = ?
                """, [.int(d.attempt), .opt(status), .int(durationMs), .text(d.id)])
            try db.run("UPDATE webhooks SET last_delivery_at = ?\(counts ? ", consecutive_failures = 0" : "") WHERE id = ?",
                       [.int(t), .text(d.webhook)])
            return
        }
        let final = d.attempt >= WebhookDeliverer.maxAttempts || status == 410
        let next: SQLValue = final ? .null : .int(WebhookDeliverer.nowMs() + WebhookDeliverer.retryBaseMs << (d.attempt - 1))
        try db.run("""
            UPDATE webhook_deliveries SET attempt = ?, status = ?, response_status = ?, duration_ms = ?, error = ?, next_attempt_ms = ?
            WHERE id = ?
            """, [.int(d.attempt), .text(final ? "failed" : "pending"), .opt(status), .int(durationMs), .opt(error.map { String($0.prefix(1024)) }),
                  next, .text(d.id)])
        if status == 410 {
            try db.run("UPDATE webhooks SET status = 'disabled' WHERE id = ?", [.text(d.webhook)])
        } else if final && counts {
            try db.run("""
                UPDATE webhooks SET consecutive_failures = consecutive_failures + 1,
                  status = CASE WHEN consecutive_failures + 1 >= 3 AND status = 'healthy' THEN 'unhealthy' ELSE status END WHERE id = ?
                """, [.text(d.webhook)])
        }
    }
}

extension HubSandbox {
    /// Starts posting webhook deliveries on a background thread (idempotent).
    public func startWebhookDelivery() { deliverer.start() }
    /// Stops the delivery thread after its current batch, or — `wait: false`, for a
    /// process about to exit — at once.
    public func stopWebhookDelivery(wait: Bool = true) { deliverer.stop(wait: wait) }

    /// Stops the delivery thread, waiting at most `seconds` for the attempt it has in
    /// flight. Returns whether it finished in time.
    @discardableResult
    public func stopWebhookDelivery(waitingAtMost seconds: Double) -> Bool { deliverer.stop(waitingAtMost: seconds) }

    /// Whether any webhook is registered and not disabled (so changes may be delivered).
    public var hasWebhooks: Bool { deliverer.hasWebhooks() }

    /// Sends the deliveries due now, one attempt each, until none is due or `seconds`
    /// have passed; never waits for a retry's backoff. Returns how many deliveries are
    /// still pending (a receiver that did not answer, or retries not due yet): they
    /// stay in the store's outbox for the next process on it (an embedded run or
    /// `sandbox serve`).
    public func deliverDueWebhooks(within seconds: Double) -> Int {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline, deliverer.deliverDue(until: deadline) {}
        return deliverer.pendingCount()
    }
}
