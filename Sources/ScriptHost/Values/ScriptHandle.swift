import Foundation
import Synchronization

/// An opaque value a binding hands to Lua: the recipe can hold it, store it in
/// tables and pass it to bindings, but never read it.
///
/// In Lua a handle is a full userdata with a hidden metatable: `tostring` gives
/// `<label>` (e.g. `<secret dispatch/ci>`); concatenation, `#`, comparison, indexing,
/// arithmetic, calls, `string.format` and `json.encode` raise an error that names the
/// handle; `getmetatable` returns `false`. A recipe cannot forge one: only the C side
/// makes them, and a handle read back from Lua is looked up by the id C stored in it.
/// The handle carries no secret: whatever it stands for stays on the Swift side, where
/// the bindings that take it resolve it (see `docs/architecture.md`, "Secrets").
///
/// Identity is the object; one run registers at most `HandleRegistry.maxHandles`.
public final class ScriptHandle: Sendable, Hashable, CustomStringConvertible {
    /// What the handle stands for, e.g. `secret`.
    public let kind: String
    /// Which one, e.g. the vault entry's name.
    public let name: String

    public init(kind: String, name: String) {
        self.kind = kind
        self.name = name
    }

    /// `kind name`, shown as `<kind name>` by `tostring`.
    public var label: String { "\(kind) \(name)" }
    public var description: String { "<\(label)>" }

    public static func == (lhs: ScriptHandle, rhs: ScriptHandle) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// One handle per name for a run: a binding that hands out handles (`vault.secret`)
/// returns the same one for the same name, so a run holds as many as it has names.
public final class ScriptHandleCache: Sendable {
    public let kind: String
    private let handles = Mutex<[String: ScriptHandle]>([:])

    public init(kind: String) { self.kind = kind }

    public func handle(_ name: String) -> ScriptHandle {
        handles.withLock { handles in
            if let h = handles[name] { return h }
            let h = ScriptHandle(kind: kind, name: name)
            handles[name] = h
            return h
        }
    }
}

extension ScriptValue {
    /// The value with every handle replaced by its label `<kind name>` (a string), for
    /// output meant for people and `--json` events: a log field or an error table that
    /// holds a handle shows which one, never fails to encode, and shows no value.
    public var showingHandles: ScriptValue {
        switch self {
        case .handle(let h): return .string(h.description)
        case .array(let items): return .array(items.map(\.showingHandles))
        case .object(let fields): return .object(fields.mapValues(\.showingHandles))
        default: return self
        }
    }
}
