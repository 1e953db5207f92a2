import Foundation
import HTTPKit
import SQLiteKit
import Synchronization

/// The sandbox Dispatch as hubscript embeds and serves it: a `DispatchSandbox` whose
/// accepted notifications and idempotency records are also kept in SQLite — the
/// sandbox's state file next to the Hub's tables, or a private `:memory:` database — so
/// they outlive the process (an embedded run's sends stay visible to
/// `hubscript sandbox dispatch-log`, a resumed run's resend is replayed), and with
/// injected faults on `POST /v1/notifications` (never on `/health` or the device routes).
///
/// A send with an `Idempotency-Key` the store holds for the same machine is answered from
/// the store (`Idempotent-Replayed: true`, the same body; `409 idempotency_key_reused`
/// for another body) without reaching the relay; a new one goes to the relay, and a `202`
/// is recorded in the same transaction, which also serialises processes sharing the file.
/// Each machine token may send 600 a minute (`429 rate_limited` with `Retry-After`,
/// `RateLimit-*` headers on every send) when rate limits are standard.
/// Faults as in `FaultSpec`: `error`/`unavailable` answer 500/503 before anything is
/// recorded; `lost` records the send, then drops the response; `latency` delays it.
/// Thread-safe.
public final class StoredDispatchSandbox: Sendable {
    /// The store's connection, the fault draws and the send buckets, used by one
    /// request at a time.
    private struct Store {
        let db: SQLiteDatabase
        var rng: SplitMix64
        let limiter: RateLimiter
    }
    private let store: Mutex<Store>
    private let relay: DispatchSandbox
    private let options: DispatchOptions
    private let faults: FaultSpec
    /// Whether sends are rate limited (the buckets in `store` enforce it).
    private let limitsEnforced: Bool
    private let clock: any SandboxClock

    /// Sends per machine token per minute (docs/hub-api.md, "Rate limits": 600 a minute per key).
    public static let sendsPerMinute = 600

    /// Opens (creating the tables if missing) the store in `storage`. With `rateLimits`
    /// standard (`sandbox serve` passes its own; embedded runs go unlimited, like the
    /// embedded Hub), each machine token may send `sendsPerMinute` notifications a minute
    /// (a token bucket of this process; replays do not count); the next send gets
    /// `429 rate_limited` with `Retry-After`.
    public init(storage: SandboxOptions.Storage, options: DispatchOptions = DispatchOptions(), faults: FaultSpec = .none,
                rateLimits: SandboxOptions.RateLimits = .off, clock: any SandboxClock = SystemClock()) throws {
        self.clock = clock
        let db: SQLiteDatabase
        switch storage {
        case .memory: db = try .sandboxStore(path: ":memory:")
        case .file(let url): db = try .sandboxStore(path: url.path)
        }
        try db.exec(Self.schema)
        limitsEnforced = rateLimits == .standard
        store = Mutex(Store(db: db, rng: SplitMix64(seed: faults.seed), limiter: RateLimiter(enforced: limitsEnforced)))
        relay = DispatchSandbox(options: options)
        self.options = options
        self.faults = faults
    }

    static let schema = """
        CREATE TABLE IF NOT EXISTS dispatch_sent(
          seq INTEGER PRIMARY KEY, id TEXT NOT NULL, machine TEXT NOT NULL, title TEXT NOT NULL, body TEXT NOT NULL,
          accepted_devices INTEGER NOT NULL, idempotency_key TEXT, created_at INTEGER NOT NULL);
        CREATE TABLE IF NOT EXISTS dispatch_idempotency(
          machine TEXT NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL, body TEXT NOT NULL,
          PRIMARY KEY(machine, key)) WITHOUT ROWID;
        """

    /// Every notification the store holds (accepted by any process that shares it),
    /// oldest first; replays are not repeated.
    public func sentNotifications() throws -> [SentNotification] {
        try store.withLock { store in
            var out: [SentNotification] = []
            try store.db.query("SELECT id, machine, title, body, accepted_devices, idempotency_key FROM dispatch_sent ORDER BY seq") { s in
                out.append(SentNotification(id: s.text(0), machine: s.text(1), title: s.text(2), body: s.text(3),
                                            acceptedDevices: s.int(4), idempotencyKey: s.textOrNil(5)))
            }
            return out
        }
    }

    public func handle(_ request: HTTPRequestMessage) -> HTTPResponseMessage {
        guard request.method == "POST", request.pathSegments == ["v1", "notifications"] else { return relay.handle(request) }
        if faults.latency > .zero { Thread.sleep(forTimeInterval: faults.latency.seconds) }
        return store.withLock { store in
            let fault = faults.isNone ? .none : Fault.draw(faults, &store.rng)
            switch fault {
            case .error:
                return Self.error(500, "internal_error", "Injected fault: internal error (nothing was sent).")
            case .unavailable:
                var r = Self.error(503, "service_unavailable", "Injected fault: service unavailable (nothing was sent).")
                r.headers.add("Retry-After", String(faults.retryAfterSeconds))
                return r
            case .none, .lost:
                do {
                    let (db, limiter) = (store.db, store.limiter)
                    var response = try db.transaction { try notify(request, db, limiter) }
                    response.dropped = fault == .lost
                    return response
                } catch {
                    return Self.error(500, "internal_error", "The sandbox Dispatch could not use its store: \(error)")
                }
            }
        }
    }

    /// Answers a send from the store, or hands it to the relay and records a `202`.
    private func notify(_ request: HTTPRequestMessage, _ db: SQLiteDatabase, _ limiter: RateLimiter) throws -> HTTPResponseMessage {
        let machine = request.headers["Authorization"].flatMap { header -> String? in
            guard header.hasPrefix("Bearer ") else { return nil }
            let token = String(header.dropFirst(7))
            return options.machineTokens.first { DispatchSandbox.same($0.key, token) }?.value
        }
        let key = request.headers["Idempotency-Key"]
        let fingerprint = HubEngine.fingerprint(request)
        if let machine, let key,
           let stored = try db.first("SELECT fingerprint, body FROM dispatch_idempotency WHERE machine = ? AND key = ?",
                                     [.text(machine), .text(key)], { s in (s.text(0), s.text(1)) }) {
            guard stored.0 == fingerprint else {
                return Self.error(409, "idempotency_key_reused", "This Idempotency-Key was used with a different body.")
            }
            return HTTPResponseMessage(status: 202, headers: HTTPHeaders([("Content-Type", "application/json"), ("Idempotent-Replayed", "true")]),
                                       body: Data(stored.1.utf8))
        }
        var outcome: RateLimiter.Outcome?
        if let machine {
            let o = limiter.take("send:" + machine, capacity: Self.sendsPerMinute, window: 60,
                                 now: clock.now().timeIntervalSince1970)
            guard o.allowed else {
                var r = Self.error(429, "rate_limited", "Too many sends from this machine token (\(Self.sendsPerMinute) a minute); retry after \(o.retryAfter) s.")
                r.headers.add("Retry-After", String(o.retryAfter))
                addRateHeaders(o, to: &r)
                return r
            }
            outcome = o
        }
        let before = relay.sentNotifications.count
        var response = relay.handle(request)
        if let outcome { addRateHeaders(outcome, to: &response) }
        guard response.status == 202, let sent = relay.sentNotifications.dropFirst(before).first else { return response }
        try db.run("""
            INSERT INTO dispatch_sent(id, machine, title, body, accepted_devices, idempotency_key, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """, [.text(sent.id), .text(sent.machine), .text(sent.title), .text(sent.body), .int(sent.acceptedDevices),
                  .opt(sent.idempotencyKey), .int(Int(Date().timeIntervalSince1970))])
        if let key {
            try db.run("INSERT OR REPLACE INTO dispatch_idempotency(machine, key, fingerprint, body) VALUES (?, ?, ?, ?)",
                       [.text(sent.machine), .text(key), .text(fingerprint), .text(String(decoding: response.body, as: UTF8.self))])
        }
        return response
    }

    private func addRateHeaders(_ o: RateLimiter.Outcome, to response: inout HTTPResponseMessage) {
        // Rate limits off: no bucket, so no RateLimit-* headers (a client would pace under them).
        guard limitsEnforced else { return }
        response.headers["RateLimit-Limit"] = String(o.limit)
        response.headers["RateLimit-Remaining"] = String(o.remaining)
        response.headers["RateLimit-Reset"] = String(o.reset)
    }

    private static func error(_ status: Int, _ code: String, _ message: String) -> HTTPResponseMessage {
        let body = JSON.object([("error", .object([("code", .string(code)), ("message", .string(message))]))])
        return HTTPResponseMessage(status: status, headers: ["Content-Type": "application/json"], body: body.data)
    }

    /// One draw of the injected faults for a send.
    enum Fault: Equatable {
        case none, error, unavailable, lost

        static func draw(_ f: FaultSpec, _ rng: inout SplitMix64) -> Fault {
            let u = rng.unit()
            if u < f.errorRate { return .error }
            if u < f.errorRate + f.unavailableRate { return .unavailable }
            return f.lostRate > 0 && rng.unit() < f.lostRate ? .lost : .none
        }
    }
}
