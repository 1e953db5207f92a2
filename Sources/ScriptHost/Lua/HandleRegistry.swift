/// The handles one Lua state has been given, by the id stored in their userdata.
/// A handle pushed twice keeps its id, so the table grows with distinct handles only.
final class HandleRegistry {
    /// Distinct handles one run may hold; bindings cache theirs (one per secret name).
    static let maxHandles = 4096

    private var handles: [ScriptHandle] = []
    private var ids: [ObjectIdentifier: Int] = [:]

    struct Full: Error {}

    /// The id of `handle`, registering it on first use.
    func id(of handle: ScriptHandle) throws -> Int {
        if let id = ids[ObjectIdentifier(handle)] { return id }
        guard handles.count < Self.maxHandles else { throw Full() }
        handles.append(handle)
        ids[ObjectIdentifier(handle)] = handles.count - 1
        return handles.count - 1
    }

    func handle(_ id: Int) -> ScriptHandle? { handles.indices.contains(id) ? handles[id] : nil }
}
