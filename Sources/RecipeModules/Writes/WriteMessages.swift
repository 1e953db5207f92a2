import JSONKit
import ScriptHost
import RunJournal

/// The texts of the coordinator's refusals. Each says what happened, that nothing was
/// sent, and what to do; tests pin them exactly. What a recipe controls (methods,
/// paths, keys, bodies) is shown through `TerminalText.field`, so a line break or an
/// escape sequence in it cannot forge or hide a line of the message.
enum WriteMessages {
    static let newPlanAdvice = "Make a new plan with hubscript plan, review it, and apply that one."

    /// `earlier`: the writes earlier passes of the run made (the limit counts them too).
    static func limitReached(limit: Int, intent: WriteIntent, earlier: Int = 0) -> String {
        var text = "limit exceeded: writes: the recipe's limit is \(limit) (limits.writes / --max-writes); stopped before write \(limit + 1): "
            + "\(f(intent.method)) \(f(intent.path))"
        if earlier > 0 {
            text += " (counted over the whole run: \(earlier) \(earlier == 1 ? "write" : "writes") in earlier passes; "
                + "resume with a higher --max-writes to go on)"
        }
        return text
    }

    static func answerHoldsSecret(_ r: WriteCoordinator.Request, secret: String) -> String {
        "write \(r.number) (\(f(r.intent.method)) \(f(r.intent.path))) was answered with the text of the secret '\(secret)'; "
            + "a recipe is never handed a secret, nor an answer that would be masked only on resume, so the run stops here "
            + "with the write pending (a resume resends it under the same key). Check what the recipe sent: the server echoed a secret's value"
    }

    static func plannedBodyHoldsSecret(_ r: WriteCoordinator.Request, secret: String) -> String {
        "plan: write \(r.number) (\(f(r.intent.method)) \(f(r.intent.path))) would send the text of the secret '\(secret)'; "
            + "a plan file never keeps a secret, and a plan that masked it could not be applied, so planning stops here. "
            + "Run the recipe without plan and apply"
    }

    static func beyondPlan(_ r: WriteCoordinator.Request, planCount: Int) -> String {
        """
        apply: the recipe wants write \(r.number) but the plan has only \(planCount) \(planCount == 1 ? "write" : "writes"); \
        nothing was sent for it.
          recipe: \(line(r.intent.method, r.intent.path, r.body))
        \(newPlanAdvice)
        """
    }

    /// `expected`: the planned write with the bound placeholders replaced; `key`: the
    /// request's key in the plan's form; `ids`: the placeholders the planned write uses.
    static func divergesFromPlan(_ r: WriteCoordinator.Request, expected: PlannedWrite, key: String, ids: [String]) -> String {
        var changes: [String] = []
        if expected.method != r.intent.method { changes.append("method \(f(expected.method)) → \(f(r.intent.method))") }
        if expected.path != r.intent.path { changes.append("path \(f(expected.path)) → \(f(r.intent.path))") }
        if expected.bodySHA256 != r.bodySHA256 { changes.append("body " + BodyDiff.summary(expected.body.map(ScriptValue.init), r.body.map(ScriptValue.init))) }
        if changes.isEmpty {
            changes.append("key \(f(expected.key)) → \(f(key)) (an explicit key changed, or an identical write was added or removed before it)")
        }
        return """
            apply: write \(r.number) differs from the plan; nothing was sent for it.
              plan:   \(line(expected.method, expected.path, expected.body))
              recipe: \(line(r.intent.method, r.intent.path, r.body))
              changed: \(changes.joined(separator: "; "))\(ids.isEmpty ? "" : "\n  ids: " + ids.joined(separator: "; "))
            \(newPlanAdvice)
            """
    }

    static func planNotFinished(plan: Plan, performed: Int) -> String {
        let missing = plan.writes.dropFirst(performed)
        let list = missing.prefix(5).map { "#\($0.sequence) \(f($0.method)) \(f($0.path))" }.joined(separator: ", ")
        let more = missing.count > 5 ? ", and \(missing.count - 5) more" : ""
        return "apply: the plan has \(plan.writes.count) writes but the recipe made only \(performed); "
            + "not made: \(list)\(more)"
    }

    static func keyReused(_ r: WriteCoordinator.Request, existing: WriteRecord) -> String {
        "the idempotency key \(f(r.key)) was already used in run \(f(existing.runID)) for \(f(existing.method)) \(f(existing.path)) "
            + "with \(existing.bodySHA256 == nil ? "no body" : "another body"); nothing was sent for "
            + "\(f(r.intent.method)) \(f(r.intent.path)). Give each different write its own key."
    }

    /// `POST /users/usr_ada/suspend {"reason":"x"}`; the body compact and cut short.
    static func line(_ method: String, _ path: String, _ body: JSONValue?) -> String {
        guard let body else { return "\(f(method)) \(f(path))" }
        return "\(f(method)) \(f(path)) \(CompactJSON.text(ScriptValue(body), max: 80))"
    }

    /// A recipe-controlled field, safe to show (`TerminalText.field`).
    static func f(_ text: String) -> String { TerminalText.field(text) }
}

/// Compact one-line JSON for messages and tables.
enum CompactJSON {
    /// Canonical JSON of `value`, cut to `max` characters with a trailing `…`. Safe to
    /// show on a terminal: JSON already escapes C0 controls; DEL, C1 and bidi controls,
    /// which it leaves raw, are escaped by `TerminalText`.
    static func text(_ value: ScriptValue?, max: Int) -> String {
        guard let value else { return "(none)" }
        let full = TerminalText.field((try? JSONCodec.encode(value)) ?? "(not JSON)")
        guard full.count > max else { return full }
        return String(full.prefix(Swift.max(0, max - 1))) + "…"
    }
}

/// A short description of how two bodies differ.
enum BodyDiff {
    /// For two objects, field by field (`reason: "a" → "b", +notify: true, -note`);
    /// otherwise the two bodies whole (`{…} → (none)`).
    static func summary(_ old: ScriptValue?, _ new: ScriptValue?) -> String {
        guard case .object(let a)? = old, case .object(let b)? = new else {
            return "\(CompactJSON.text(old, max: 40)) → \(CompactJSON.text(new, max: 40))"
        }
        var parts: [String] = []
        for key in Set(a.keys).union(b.keys).sorted() {
            switch (a[key], b[key]) {
            case (let x?, let y?) where x != y:
                parts.append("\(TerminalText.field(key)): \(CompactJSON.text(x, max: 30)) → \(CompactJSON.text(y, max: 30))")
            case (nil, let y?): parts.append("+\(TerminalText.field(key)): \(CompactJSON.text(y, max: 30))")
            case (_?, nil): parts.append("-\(TerminalText.field(key))")
            default: break
            }
        }
        return parts.joined(separator: ", ")
    }
}
