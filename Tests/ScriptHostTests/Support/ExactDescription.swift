import ScriptHost

/// A value written out exactly, for comparing two readings of the same text: strings
/// and keys by their UTF-8 bytes (Swift's `==` calls canonically equivalent strings
/// equal), numbers by kind (integer or float) and by the bits of floats (so -0.0 and
/// NaN compare as Lua has them).
func exactDescription(_ v: ScriptValue) -> String {
    switch v {
    case .integer(let i): "i\(i)"
    case .number(let d): "f\(d.bitPattern)"
    case .string(let s): "s\(Array(s.utf8))"
    case .bool(let b): "b\(b)"
    case .array(let a): "[" + a.map(exactDescription).joined(separator: ",") + "]"
    case .object(let o):
        "{" + o.map { (Array($0.key.utf8), exactDescription($0.value)) }
            .sorted { $0.0.lexicographicallyPrecedes($1.0) }
            .map { "\($0.0)=\($0.1)" }.joined(separator: ",") + "}"
    default: "?\(v)"
    }
}
