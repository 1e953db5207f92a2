import SystemText

/// Masking of the values a recipe and its bindings exchange (see `SecretRedactor`).
extension SecretRedactor {
    /// `value` with every registered value masked in its strings (keys included).
    public func redact(_ value: ScriptValue) -> ScriptValue {
        guard isActive else { return value }
        switch value {
        case .string(let s): return .string(redact(s))
        case .bytes(let b):
            return b.withUnsafeBytes { redacted($0) }.map { ScriptValue.bytes($0) } ?? value
        case .array(let items): return .array(items.map(redact))
        case .object(let fields):
            return .object(Dictionary(fields.map { (redact($0.key), redact($0.value)) }, uniquingKeysWith: { a, _ in a }))
        default: return value
        }
    }

    /// The name of a registered secret held by a string (or key) anywhere in `value`, or nil.
    public func firstSecret(in value: ScriptValue) -> String? {
        guard isActive else { return nil }
        switch value {
        case .string(let s): return firstSecret(in: s)
        case .bytes(let b):
            return b.withUnsafeBytes { firstSecret(in: $0) }
        case .array(let items):
            for item in items { if let name = firstSecret(in: item) { return name } }
            return nil
        case .object(let fields):
            for (key, item) in fields { if let name = firstSecret(in: key) ?? firstSecret(in: item) { return name } }
            return nil
        default: return nil
        }
    }
}
