import ScriptHost

/// Indented canonical JSON (sorted keys, two spaces) for files people read, such as
/// plans. Scalars are written by `JSONCodec`, so the bridging rules are the same.
enum PrettyJSON {
    static func encode(_ value: ScriptValue) throws -> String {
        var out = ""
        try write(value, indent: "", into: &out)
        return out + "\n"
    }

    private static func write(_ value: ScriptValue, indent: String, into out: inout String) throws {
        let inner = indent + "  "
        switch value {
        case .array(let items) where !items.isEmpty:
            out += "[\n"
            for (n, item) in items.enumerated() {
                out += inner
                try write(item, indent: inner, into: &out)
                out += n + 1 < items.count ? ",\n" : "\n"
            }
            out += indent + "]"
        case .object(let fields) where !fields.isEmpty:
            out += "{\n"
            let keys = fields.keys.sorted()
            for (n, key) in keys.enumerated() {
                out += inner + (try JSONCodec.encode(.string(key))) + ": "
                try write(fields[key]!, indent: inner, into: &out)
                out += n + 1 < keys.count ? ",\n" : "\n"
            }
            out += indent + "}"
        default:
            out += try JSONCodec.encode(value)
        }
    }
}
