import Foundation
import HTTPKit
import ScriptHost
import RunJournal
import Secrets
import Configuration

/// Runs a trigger's recipe for one event, under `trigger.runID(eventID:)` with
/// `params.event` (the CLI runs it as `hubscript run` would; tests use a double).
public protocol TriggerExecutor: Sendable {
    func execute(_ trigger: ConfiguredTrigger, event: TriggerEventRecord, value: ScriptValue) -> FireResult
    /// The same under `lock`, the event's run lock the listener took (hand it to
    /// `HubRunRequest.heldLock`). By default the lock is not passed on.
    func execute(_ trigger: ConfiguredTrigger, event: TriggerEventRecord, value: ScriptValue,
                 lock: any HeldRunLock) -> FireResult
}

extension TriggerExecutor {
    public func execute(_ trigger: ConfiguredTrigger, event: TriggerEventRecord, value: ScriptValue,
                        lock: any HeldRunLock) -> FireResult {
        execute(trigger, event: event, value: value)
    }
}

/// The receiving end of Hub webhooks (`hubscript listen`, `jobs serve --listen`):
///
/// 1. the signature is checked, in constant time, against the secret of every trigger
///    (read from the vault entry each names); a missing, malformed or wrong signature,
///    or a timestamp more than 5 minutes off, is `401` and nothing is recorded;
/// 2. the event is journalled (`trigger_events`, one row per event and trigger) and only
///    then answered `202`; a delivery of an event already journalled only counts;
/// 3. a worker thread runs each trigger's recipe once per event, one at a time, under
///    the run id `TRIGGER@<event id>`: a redelivery of a finished event runs nothing,
///    one whose run was interrupted (or failed) resumes it, and events a dead listener
///    left unfinished are resumed when the next one starts.
public final class TriggerListener: @unchecked Sendable {
    public let config: TriggersConfig
    public let journal: Journal
    let secrets: any SecretResolver
    let executor: any TriggerExecutor
    let clock: @Sendable () -> Date
    /// One line per decision (received, duplicate, refused, ran), for the console.
    public var onLog: @Sendable (String) -> Void = { _ in }
    /// How each delivery was answered (for `/metrics`), once per delivery.
    public var onDelivery: @Sendable (DeliveryOutcome) -> Void = { _ in }
    /// The journal's run locks (`Journal.runLocks`). When set, an event's run is claimed
    /// under its lock before it is marked running, so a listener on another host (a
    /// PostgreSQL journal's replicas) that holds it leaves it be: nothing runs here and
    /// its status is not touched. Nil: the run takes its lock itself.
    public var locks: (any RunLocks)?

    private let condition = NSCondition()
    private var queue: [(ConfiguredTrigger, TriggerEventRecord)] = []
    /// Run ids queued or running in this process.
    private var pending: Set<String> = []
    private var stopping = false
    private var finished = false
    private var started = false

    public init(config: TriggersConfig, journal: Journal, secrets: any SecretResolver, executor: any TriggerExecutor,
                clock: @escaping @Sendable () -> Date = { Date() }) {
        self.config = config
        self.journal = journal
        self.secrets = secrets
        self.executor = executor
        self.clock = clock
    }

    // MARK: Receiving

    public func handle(_ request: HTTPRequestMessage) -> HTTPResponseMessage {
        let response = receive(request)
        switch response.status {
        case 401: onDelivery(.rejectedSignature)
        case 400: onDelivery(.malformed)
        case 500: onDelivery(.error)
        default: break
        }
        return response
    }

    private func receive(_ request: HTTPRequestMessage) -> HTTPResponseMessage {
        guard request.method == "POST" else { return Self.reply(405, ["error": "deliveries are POSTed"]) }
        let header = request.headers["Substratal-Signature"]
        var verified: Set<String> = []
        var failure: WebhookVerifier.Failure = .mismatch
        for name in Set(config.triggers.map(\.secret)).sorted() {
            let secret: String
            do { secret = try secrets.value(of: name) } catch {
                onLog("webhook refused (500): cannot read the signing secret '\(name)': \(error)\n")
                return Self.reply(500, ["error": "the receiver cannot read its signing secret"])
            }
            do {
                try WebhookVerifier.verify(header: header, body: request.body, secret: Array(secret.utf8), now: clock())
                verified.insert(name)
            } catch let f as WebhookVerifier.Failure {
                failure = f
                if case .mismatch = f { continue }
                break   // missing, malformed or stale: the same for every secret
            } catch {
                continue
            }
        }
        guard !verified.isEmpty else {
            onLog("webhook refused (401): \(failure)\n")
            return Self.reply(401, ["error": .string(failure.description)])
        }
        guard case .object(let event)? = try? JSONCodec.decode(request.body),
              let id = event["id"]?.stringValue, let type = event["type"]?.stringValue,
              id.range(of: "^[A-Za-z0-9_-]{1,128}$", options: .regularExpression) != nil else {
            onLog("webhook refused (400): the body is not an event with an id and a type\n")
            return Self.reply(400, ["error": "the body must be an event: a JSON object with id and type"])
        }
        let triggers = config.matching(type).filter { verified.contains($0.secret) }
        guard !triggers.isEmpty else {
            onLog("\(id) \(type): no trigger listens for it (ignored)\n")
            onDelivery(.ignored)
            return Self.reply(200, ["event_id": .string(id), "runs": .array([])])
        }
        let body = String(decoding: request.body, as: UTF8.self)
        var runs: [ScriptValue] = []
        var isNewEvent = false
        for trigger in triggers {
            let runID = trigger.runID(eventID: id)
            let recorded: (record: TriggerEventRecord, isNew: Bool)
            do {
                recorded = try journal.recordTriggerEvent(eventID: id, trigger: trigger.name, eventType: type, body: body, runID: runID)
            } catch {
                onLog("webhook refused (500): the journal failed: \(error)\n")
                return Self.reply(500, ["error": "the receiver could not record the event"])
            }
            runs.append(.string(runID))
            isNewEvent = isNewEvent || recorded.isNew
            if recorded.record.status == .succeeded {
                onLog("\(runID) already done (delivery \(recorded.record.deliveries)): nothing runs\n")
            } else if enqueue(trigger, recorded.record) {
                onLog("\(runID) \(recorded.isNew ? "received" : "redelivered, resuming")\n")
            } else {
                onLog("\(runID) duplicate delivery while it is queued or running\n")
            }
        }
        onDelivery(isNewEvent ? .accepted : .duplicate)
        return Self.reply(202, ["event_id": .string(id), "runs": .array(runs)])
    }

    static func reply(_ status: Int, _ fields: [String: ScriptValue]) -> HTTPResponseMessage {
        var headers = HTTPHeaders()
        headers.add("Content-Type", "application/json")
        return HTTPResponseMessage(status: status, headers: headers, body: (try? JSONCodec.encodeData(.object(fields))) ?? Data())
    }

    // MARK: Running

    /// Queues a run unless it is queued or running here already, or succeeded since
    /// `record` was read; false then.
    @discardableResult
    func enqueue(_ trigger: ConfiguredTrigger, _ record: TriggerEventRecord) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping, !pending.contains(record.runID) else { return false }
        // The worker records a run's outcome before the run leaves `pending`: a delivery
        // that read the event as unfinished just before must not run it again.
        let now = try? journal.triggerEvents(record.eventID).first { $0.trigger == trigger.name }
        if now?.status == .succeeded { return false }
        pending.insert(record.runID)
        queue.append((trigger, record))
        condition.signal()
        return true
    }

    /// Queues the events a previous listener left unfinished, then starts the worker.
    public func start() throws {
        let byName = Dictionary(uniqueKeysWithValues: config.triggers.map { ($0.name, $0) })
        for record in try journal.unfinishedTriggerEvents() {
            guard let trigger = byName[record.trigger] else { continue }
            if enqueue(trigger, record) { onLog("\(record.runID) left unfinished: resuming\n") }
        }
        condition.withLock { started = true }
        let thread = Thread { [self] in work() }
        thread.name = "hubscript.listen"
        thread.start()
    }

    /// Whether the worker runs and takes events (false before `start` and once stopping).
    public var isRunning: Bool {
        condition.lock()
        defer { condition.unlock() }
        return started && !stopping && !finished
    }

    /// Lets the running recipe finish, starts no other (they stay journalled as received
    /// and the next listener resumes them), and returns when the worker ended.
    public func stopAndWait() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while !finished { condition.wait() }
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while queue.isEmpty && !stopping { condition.wait() }
            if stopping {
                finished = true
                condition.broadcast()
                condition.unlock()
                return
            }
            let (trigger, record) = queue.removeFirst()
            condition.unlock()
            run(trigger, record)
            condition.lock()
            pending.remove(record.runID)
            condition.unlock()
        }
    }

    private func run(_ trigger: ConfiguredTrigger, _ record: TriggerEventRecord) {
        var held: (any HeldRunLock)?
        if let locks {
            do { held = try locks.acquire(record.runID) } catch let busy as RunLock.Busy {
                let holder = busy.pid.map { "process \($0)" + (busy.host.map { " on \($0)" } ?? "") } ?? "another process"
                onLog("\(record.runID) is running in \(holder): nothing runs here\n")
                return
            } catch {
                onLog("\(record.runID): cannot take its run lock: \(error)\n")
                return
            }
        }
        defer { held?.release() }
        do { try journal.setTriggerEvent(record.eventID, trigger: trigger.name, status: .running) } catch {
            onLog("\(record.runID): the journal failed: \(error)\n")
            return
        }
        let value = (try? JSONCodec.decode(Data(record.body.utf8))) ?? .object([:])
        let started = Date()
        let result = held.map { executor.execute(trigger, event: record, value: value, lock: $0) }
            ?? executor.execute(trigger, event: record, value: value)
        let status: TriggerEventStatus = result.exitCode == 0 ? .succeeded : .failed
        try? journal.setTriggerEvent(record.eventID, trigger: trigger.name, status: status)
        let seconds = String(format: "%.2f s", Date().timeIntervalSince(started))
        onLog(result.exitCode == 0 ? "\(record.runID) succeeded in \(seconds)\n"
              : "\(record.runID) failed (exit \(result.exitCode)) in \(seconds): \(result.message ?? "")\n")
    }
}

/// How the listener answered one delivery.
public enum DeliveryOutcome: String, Sendable, CaseIterable {
    /// A new event, journalled (`202`).
    case accepted
    /// An event already journalled (`202`; it runs again only if its run did not succeed).
    case duplicate
    /// A missing, malformed, stale or wrong signature (`401`).
    case rejectedSignature = "rejected_signature"
    /// Signed, but not an event with an id and a type (`400`).
    case malformed
    /// An event no trigger listens for (`200`).
    case ignored
    /// The listener could not read its secret or record the event (`500`).
    case error
}
