import ScriptHost

/// A value as indented JSON for people (`hubscript eval`, `repl`): keys sorted, two
/// spaces a level, strings escaped as JSON (so nothing a value holds can move the
/// terminal). A function or handle, which JSON cannot hold, shows as a string naming it.
enum PrettyJSON {
    static func lines(_ value: ScriptValue) -> [String] {
        var lines: [String] = []
        write(value, indent: "", prefix: "", suffix: "", into: &lines)
        return lines
    }

    static func text(_ value: ScriptValue) -> String { lines(value).joined(separator: "\n") }

    private static func write(_ value: ScriptValue, indent: String, prefix: String, suffix: String, into lines: inout [String]) {
        switch value {
        case .array(let items) where !items.isEmpty:
            lines.append(indent + prefix + "[")
            for (k, item) in items.enumerated() {
                write(item, indent: indent + "  ", prefix: "", suffix: k == items.count - 1 ? "" : ",", into: &lines)
            }
            lines.append(indent + "]" + suffix)
        case .object(let fields) where !fields.isEmpty:
            lines.append(indent + prefix + "{")
            let keys = fields.keys.sorted()
            for (k, key) in keys.enumerated() {
                write(fields[key]!, indent: indent + "  ", prefix: scalar(.string(key)) + ": ",
                      suffix: k == keys.count - 1 ? "" : ",", into: &lines)
            }
            lines.append(indent + "}" + suffix)
        default:
            lines.append(indent + prefix + scalar(value) + suffix)
        }
    }

    private static func scalar(_ value: ScriptValue) -> String {
        switch value {
        case .nilValue: return "null"
        case .function: return scalar(.string("<function>"))
        case .handle(let handle): return scalar(.string("\(handle)"))
        default: return (try? JSONCodec.encode(value)) ?? scalar(.string("<unencodable>"))
        }
    }
}
