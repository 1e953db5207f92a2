import ScriptHost

extension HubRunContext {
    /// Performs a write that is not a Hub request (`state.set`, Dispatch sends) through
    /// the run's coordinator, with the same `--json` `write`/`write_failed` events as
    /// Hub writes. `send` gets the idempotency key and applies the write.
    public func perform(_ intent: WriteIntent, send: (String) throws -> ScriptValue) throws -> WriteResult {
        let result: WriteResult
        do { result = try writes.perform(intent, send: send) } catch let error where !(error is ScriptLimitError) {
            onWriteFailed?(intent, error)
            throw error
        }
        onWrite?(intent, result)
        return result
    }
}
