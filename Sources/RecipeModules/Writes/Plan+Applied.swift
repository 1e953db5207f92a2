import ScriptHost

extension Plan {
    /// Whether the journal holds every write of the plan as done, following the keys an
    /// apply sends (see `WriteCoordinator`): each planned write with the placeholders
    /// bound so far replaced by real ids — the bindings rebuilt, write by write, from the
    /// journalled responses of the plan's creates — and a derived key derived from that
    /// real form, an explicit one taken from the plan with the placeholders replaced.
    ///
    /// - Parameter done: the journalled response of each of the run's done writes, by key
    ///   (`.nilValue` for a response without a body).
    public func isApplied(done: [String: ScriptValue]) -> Bool {
        var bindings = PlanBindings()
        var plannedCounts: [String: Int] = [:], sentCounts: [String: Int] = [:]
        for w in writes {
            let plannedCanonical = WriteBody.canonical(w.body)
            let plannedIdentity = [w.method, w.path, plannedCanonical].joined(separator: "\u{0}")
            let plannedOccurrence = plannedCounts[plannedIdentity, default: 0]
            plannedCounts[plannedIdentity] = plannedOccurrence + 1
            let derived = w.key == IdempotencyKey.derive(runID: runID, method: w.method, path: w.path,
                                                         canonicalBody: plannedCanonical, occurrence: plannedOccurrence)
            let path = bindings.substitute(w.path)
            let canonical = WriteBody.canonical(w.body.map { bindings.substitute($0) })
            let identity = [w.method, path, canonical].joined(separator: "\u{0}")
            let occurrence = sentCounts[identity, default: 0]
            sentCounts[identity] = occurrence + 1
            let key = derived
                ? IdempotencyKey.derive(runID: runID, method: w.method, path: path, canonicalBody: canonical, occurrence: occurrence)
                : bindings.substitute(w.key)
            guard let response = done[key] else { return false }
            if let creation = w.creates { bindings.bind(creation, response: response) }
        }
        return true
    }
}
