import SystemText
import JSONKit
import ScriptHost
import RunJournal

/// The one place writes go through: keys, the write limit, the journal, plan and apply.
/// Dry-run is enforced here, never per binding.
///
/// One coordinator per run, used from the run's thread only. Every `perform` is one
/// logical write, numbered from 1 in call order. `writeLimit` bounds the distinct writes
/// of the whole run, every pass together: a write whose key an earlier pass journalled
/// (replayed, or resent after a crash) is not a new one, any other write (sent, or
/// planned) is, so a run stopped at its limit and resumed sends nothing new. A write
/// refused by the limit or by the plan consumes no number.
///
/// Created ids across plan and apply: in plan mode a write whose intent `creates`
/// something predicts a placeholder id (`usr_planned_1`, see `PlanPlaceholder`) and the
/// plan records it with the write. In apply mode, once that write is sent (or replayed
/// from the journal, which is how a second apply of a half-applied plan learns it), the
/// placeholder is bound to the id in the response (`bindings`), and each later write is
/// compared with its planned write after the bound placeholders in the plan's path, body
/// and explicit key are replaced by the real ids — nothing else is loosened: method,
/// path, body and key must still match exactly.
///
/// Keys: a write is always sent with the key derived from the request as sent (the real
/// ids), exactly as a live run derives it, so `hubscript runs resume` of an interrupted
/// apply (a live pass, without the plan) derives the same keys and replays what the
/// apply did. The plan's key of a write that mentions a placeholder is the key of its
/// placeholder form; the apply checks that key by deriving it from the planned write and
/// the number of identical planned writes before it, which still catches an identical
/// write added or removed before it, or an explicit key that changed.
public final class WriteCoordinator {
    public let runID: String
    public let mode: WriteMode
    public let writeLimit: Int?
    private let journal: Journal
    /// The run's redactor (see `init`).
    public let masking: SecretRedactor

    public private(set) var counts = WriteCounts()
    /// Plan mode: the writes recorded so far, in order.
    public private(set) var planned: [PlannedWrite] = []
    /// Logical writes performed so far.
    public private(set) var performed = 0
    private var occurrences: [String: Int] = [:]
    /// Apply mode: earlier writes per identity of their planned (placeholder) form.
    private var planOccurrences: [String: Int] = [:]
    /// Plan mode: the placeholders handed out so far, per prefix.
    private var placeholderCounts: [String: Int] = [:]
    /// Apply mode: the placeholders of the plan bound so far to the ids the Hub gave.
    public private(set) var bindings = PlanBindings()
    /// The run's reads so far (every pass), journalled with each write sent.
    public var runReads: (() -> Int)?
    /// The recorded reads not committed yet (`RecordedReads.takePending`): committed in
    /// the transaction that journals the next write, so no write is durable before the
    /// reads it was decided on.
    public var pendingReads: (() -> [RecordedRead])?
    /// The keys of the run's writes so far, every pass (the journal's, loaded on the
    /// first write, plus this pass's): what `writeLimit` counts.
    private var runKeys: Set<String>?
    /// How many of `runKeys` earlier passes journalled.
    private var earlierKeys = 0

    /// - Parameters:
    ///   - runID: the run's id; in apply mode, the plan's `runID`.
    ///   - writeLimit: `limits.writes` / `--max-writes`; nil for no limit.
    /// - Precondition: in apply mode `runID == plan.runID` (a programming error otherwise:
    ///   every derived key would differ from the plan's).
    ///   - masking: the run's redactor (`SecretRedactor`): a planned body is checked against
    ///     it (the plan file is the run's); answers go to the journal, shared by the
    ///     process's runs, masked by and checked against its `processWide` redactor.
    public init(runID: String, mode: WriteMode, journal: Journal, writeLimit: Int?, masking: SecretRedactor) {
        if case .apply(let plan) = mode {
            precondition(runID == plan.runID, "apply must run under the plan's run id \(plan.runID), not \(runID)")
        }
        self.runID = runID
        self.mode = mode
        self.journal = journal
        self.writeLimit = writeLimit
        self.masking = masking
    }

    /// Performs one write according to the mode.
    ///
    /// - Live (and apply, once the write matches the plan): a key journalled `done` returns
    ///   its stored response (`replayed`) without calling `send`; otherwise the write is
    ///   journalled `pending` (committed), `send(key)` is called, and the outcome recorded:
    ///   `done` with the value, `failed` for a `DefiniteWriteFailure` (rethrown); any
    ///   other error leaves it `pending` (outcome unknown; a resume resends the same key)
    ///   and is rethrown.
    /// - Plan: `send` is never called; the write is added to `planned` and `predicted` is
    ///   returned, with `planned = true` added when it is an object.
    /// - Throws: `ScriptStructuredError` `request_too_large` or `invalid_path` for a path
    ///   or body over `WriteIntentLimits` or a path with an empty, `.` or `..` segment
    ///   (before anything is derived or journalled); `ScriptLimitError` before the first write past `writeLimit`, and in apply
    ///   mode before a write that is not the plan's next one once bound placeholders are
    ///   replaced by their real ids (nothing is sent);
    ///   `ScriptStructuredError` (`invalid_idempotency_key`, `invalid_body`,
    ///   `idempotency_key_reused`) for a write that cannot be sent; journal errors (then
    ///   nothing was sent unless the error came from recording the outcome).
    public func perform(_ intent: WriteIntent, send: (String) throws -> ScriptValue) throws -> WriteResult {
        try WriteIntentLimits.check(intent)
        let number = performed + 1
        let canonical = intent.body?.text ?? ""
        try WriteIntentLimits.checkBody(canonical, of: intent)
        let digest = intent.body == nil ? nil : Digest.sha256Hex(canonical)
        let identity = [intent.method, intent.path, canonical].joined(separator: "\u{0}")
        let occurrence = occurrences[identity, default: 0]
        let key = try intent.explicitKey.map(Self.checkedExplicitKey) ?? IdempotencyKey.derive(
            runID: runID, method: intent.method, path: intent.path, canonicalBody: canonical, occurrence: occurrence)
        try checkLimit(key: key, intent: intent)
        let request = Request(number: number, key: key, intent: intent, bodySHA256: digest)
        var matched: (write: PlannedWrite, identity: String)?
        if case .apply(let plan) = mode { matched = try check(request, against: plan) }
        occurrences[identity] = occurrence + 1
        runKeys?.insert(key)
        if let matched { planOccurrences[matched.identity, default: 0] += 1 }
        performed = number
        if case .plan = mode { return try recordPlanned(request) }
        let result = try performLive(request, send: send)
        if let creation = matched?.write.creates { bindings.bind(creation, response: result.value) }
        return result
    }

    /// Throws `ScriptLimitError` when `key` would be a new write of the run past
    /// `writeLimit` (writes of earlier passes included).
    private func checkLimit(key: String, intent: WriteIntent) throws {
        guard let limit = writeLimit else { return }
        if runKeys == nil {
            // A plan journals no writes: only its own count.
            if case .plan = mode { runKeys = [] } else { runKeys = try journal.writeKeys(runID: runID) }
            earlierKeys = runKeys?.count ?? 0
        }
        guard let keys = runKeys, !keys.contains(key), keys.count >= limit else { return }
        throw ScriptLimitError(WriteMessages.limitReached(limit: limit, intent: intent, earlier: earlierKeys))
    }

    /// Ends the run's writes. In apply mode, returns a warning when the plan had writes
    /// this run did not make (empty otherwise).
    public func finish() -> [String] {
        guard case .apply(let plan) = mode, performed < plan.writes.count else { return [] }
        return [WriteMessages.planNotFinished(plan: plan, performed: performed)]
    }

    /// Commits the last write's staged outcome now (the run calls this before each Hub
    /// read, so an outcome waits for at most the recipe's own code between calls).
    public func commitOutcomes() throws { try journal.flush() }

    /// A write with everything derived from its intent.
    struct Request {
        let number: Int
        let key: String
        let intent: WriteIntent
        let bodySHA256: String?

        var body: JSONValue? { intent.body?.value }
    }

    private static func checkedExplicitKey(_ key: String) throws -> String {
        guard (1...255).contains(key.utf8.count), key.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F })
        else {
            throw ScriptStructuredError(code: "invalid_idempotency_key", message:
                "an idempotency key must be 1–255 visible ASCII characters (got \(key.utf8.count) bytes: \(key.prefix(40)))")
        }
        return key
    }

    /// Refuses `r` unless it is the plan's next write once the bound placeholders are
    /// replaced (see the type's comment); returns the planned write and the identity of
    /// its planned form (for counting identical planned writes).
    private func check(_ r: Request, against plan: Plan) throws -> (write: PlannedWrite, identity: String) {
        guard r.number <= plan.writes.count else {
            throw ScriptLimitError(WriteMessages.beyondPlan(r, planCount: plan.writes.count))
        }
        let planned = plan.writes[r.number - 1]
        var expected = planned
        expected.path = bindings.substitute(planned.path)
        expected.key = bindings.substitute(planned.key)
        expected.body = planned.body.map { bindings.substitute($0) }
        expected.bodySHA256 = WriteBody.digest(expected.body)
        let plannedCanonical = WriteBody.canonical(planned.body)
        let identity = [planned.method, planned.path, plannedCanonical].joined(separator: "\u{0}")
        // The key the request has in the plan's (placeholder) form: a derived key counts
        // the identical planned writes before it, as plan mode did.
        let planFormKey = r.intent.explicitKey == nil
            ? IdempotencyKey.derive(runID: runID, method: planned.method, path: planned.path, canonicalBody: plannedCanonical,
                                    occurrence: planOccurrences[identity, default: 0])
            : r.key
        guard expected.key == planFormKey, expected.method == r.intent.method,
              expected.path == r.intent.path, expected.bodySHA256 == r.bodySHA256
        else {
            throw ScriptLimitError(WriteMessages.divergesFromPlan(r, expected: expected, key: planFormKey,
                                                                  ids: bindings.describe(planned)))
        }
        return (planned, identity)
    }

    private func recordPlanned(_ r: Request) throws -> WriteResult {
        // A plan file keeps bodies masked: a body holding a loaded secret's text could
        // never be applied (apply compares the body it sends with the plan's), and
        // whether it diverged would tell the recipe that its text was the secret.
        if let body = r.body, let secret = masking.firstSecret(in: ScriptValue(body)) {
            throw ScriptLimitError(WriteMessages.plannedBodyHoldsSecret(r, secret: secret))
        }
        var predicted = r.intent.predicted
        var creation: PlannedCreation?
        if let creates = r.intent.creates {
            let n = placeholderCounts[creates.prefix, default: 0] + 1
            placeholderCounts[creates.prefix] = n
            let placeholder = PlanPlaceholder.make(prefix: creates.prefix, number: n)
            creation = PlannedCreation(placeholder: placeholder, field: creates.field)
            var fields: [String: ScriptValue] = [:]
            if case .object(let f) = predicted { fields = f }
            fields[creates.field] = .string(placeholder)
            predicted = .object(fields)
        }
        planned.append(PlannedWrite(sequence: r.number, key: r.key, method: r.intent.method, path: r.intent.path,
                                        body: r.body, summary: r.intent.summary, predicted: predicted, creates: creation))
        counts.planned += 1
        var value = predicted
        if case .object(var fields) = value {
            fields["planned"] = .bool(true)
            value = .object(fields)
        }
        return WriteResult(value: value, key: r.key, replayed: false, planned: true)
    }

    private func performLive(_ r: Request, send: (String) throws -> ScriptValue) throws -> WriteResult {
        switch try journal.beginWrite(runID: runID, sequence: r.number, key: r.key, method: r.intent.method,
                                      path: r.intent.path, bodySHA256: r.bodySHA256, runReads: runReads?(),
                                      reads: pendingReads?() ?? []) {
        case .conflict(let existing):
            throw ScriptStructuredError(code: "idempotency_key_reused",
                                        message: WriteMessages.keyReused(r, existing: existing),
                                        fields: ["key": .string(r.key)])
        case .done(let existing):
            counts.replayed += 1
            return WriteResult(value: try Self.decode(existing), key: r.key, replayed: true, planned: false)
        case .send:
            break
        }
        counts.writes += 1
        let value: ScriptValue
        do {
            value = try send(r.key)
        } catch let failure as any DefiniteWriteFailure {
            counts.failed += 1
            // If this cannot be recorded the write stays `pending`: resending is still safe.
            try? journal.recordFailed(runID: runID, key: r.key, httpStatus: failure.httpStatus,
                                      error: String(describing: failure), masking: masking.processWide)
            throw failure
        } catch {
            counts.failed += 1
            throw error
        }
        // An answer holding a loaded secret's text would be journalled masked, and a
        // resumed pass would be handed the masked copy instead: the difference would tell
        // the recipe that text it sent (and the server echoed) was the secret. The run
        // stops instead, the write left pending (a resume resends it under the same key,
        // the server replays the same answer, and the run stops again, saying why).
        if let secret = masking.processWide.firstSecret(in: value) {
            throw ScriptLimitError(WriteMessages.answerHoldsSecret(r, secret: secret))
        }
        // Staged: it commits with the next write's `beginWrite` (or at the next read or
        // the run's end); if the process dies first, the write is resent and replayed.
        try journal.recordDone(runID: runID, key: r.key, responseJSON: value.isNil ? nil : try JSONCodec.encode(value),
                               deferred: true, masking: masking.processWide)
        return WriteResult(value: value, key: r.key, replayed: false, planned: false)
    }

    private static func decode(_ record: WriteRecord) throws -> ScriptValue {
        guard let json = record.responseJSON else { return .nilValue }
        do { return try JSONCodec.decode(json) } catch {
            throw JournalError(.corrupt, "the journalled response of write \(record.key) cannot be read: \(error)")
        }
    }
}
