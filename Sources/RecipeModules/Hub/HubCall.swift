import HubClient
import ScriptHost
import Secrets

/// One call of a `hub` binding: the run's context and the Hub feature flag of the
/// binding (`HubFeatures`; nil for an ungated binding). Made for each call and handed
/// to the binding's body, so every request the call sends carries its binding's flag
/// (a `501` then turns that feature off for the run) without the flag being kept on
/// the run's context between calls.
struct HubCall {
    let run: HubRunContext
    let feature: String?

    var client: HubClient { run.client }
    var writes: WriteCoordinator { run.writes }
    var secretStore: (any SecretStore)? { run.secretStore }

    /// A GET of `path` under this call's feature (see `HubRunContext.get`).
    func get(_ path: String, _ query: [(name: String, value: String)] = []) throws -> ScriptValue {
        try run.get(path, query, feature: feature)
    }

    /// Opens a lazy list under this call's feature (see `HubRunContext.openList`).
    func openList(_ name: String, _ path: String, _ query: [(name: String, value: String)]) -> Int {
        run.openList(name, path, query, feature: feature)
    }

    func nextPage(_ id: Int) throws -> ScriptValue { try run.nextPage(id) }

    func closeList(_ id: Int) { run.closeList(id) }

    func emptyList() -> Int { run.emptyList() }

    /// Sends `write` under this call's feature (see `HubRunContext.perform`).
    func perform(_ write: HubWrite) throws -> ScriptValue { try run.perform(write, feature: feature) }

    func performWrite(_ intent: WriteIntent, send: (String) throws -> ScriptValue) throws -> WriteResult {
        try run.performWrite(intent, send: send)
    }
}
