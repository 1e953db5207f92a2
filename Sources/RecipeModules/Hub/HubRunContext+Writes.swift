import ScriptHost

extension HubRunContext {
    /// Performs a write that does not go to the Hub (a Dispatch send, `state.set`) through the run's
    /// `WriteCoordinator` — key, journal, plan and apply, write limit — and reports it as
    /// `hub` writes are reported: `onWrite` after it was sent, replayed or planned,
    /// `onWriteFailed` when `send` failed (not when a limit or the plan stopped it).
    /// `send` gets the Idempotency-Key; a `DefiniteWriteFailure` it throws is journalled
    /// as failed, any other error leaves the write pending (a resume resends it).
    public func performWrite(_ intent: WriteIntent, send: (String) throws -> ScriptValue) throws -> WriteResult {
        let result: WriteResult
        do { result = try writes.perform(intent, send: send) } catch let error where !(error is ScriptLimitError) {
            onWriteFailed?(intent, error)
            throw error
        }
        onWrite?(intent, result)
        return result
    }
}
