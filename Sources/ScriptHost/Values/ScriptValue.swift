/// A Lua value as Swift sees it: what bindings receive and return.
///
/// Tables become `.array` or `.object` by one rule (see `docs/bridging.md`):
/// a table marked with `json.array`, or whose keys are exactly `1...n`, is an array;
/// a table whose keys are all strings is an object; an empty unmarked table is an
/// object. Any other table (mixed keys, sparse sequences, float keys) is refused with
/// an error naming the offending key. Integers stay integers and floats stay floats.
public enum ScriptValue: Sendable, Hashable {
    /// Lua `nil` (an absent value).
    case nilValue
    /// `json.null`: an explicit JSON null inside data.
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    /// A Lua string that is valid UTF-8.
    case string(String)
    /// A Lua string that is not valid UTF-8 (raw bytes).
    case bytes([UInt8])
    case array([ScriptValue])
    case object([String: ScriptValue])
    /// A Swift function exposed to Lua (only Swift can build these).
    case function(ScriptFunction)
    /// An opaque handle (see `ScriptHandle`): passed through, never read.
    case handle(ScriptHandle)

    /// The Lua type name of the value, as Lua's `type()` would report it.
    public var luaTypeName: String {
        switch self {
        case .nilValue: "nil"
        case .null: "userdata"
        case .bool: "boolean"
        case .integer, .number: "number"
        case .string, .bytes: "string"
        case .array, .object: "table"
        case .function: "function"
        case .handle: "userdata"
        }
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public var intValue: Int64? {
        switch self {
        case .integer(let i): return i
        case .number(let d): return Int64(exactly: d)
        default: return nil
        }
    }

    public var isNil: Bool {
        if case .nilValue = self { return true }
        return false
    }

    /// Field `key` of an object (`.nilValue` if absent or not an object).
    public subscript(key: String) -> ScriptValue {
        if case .object(let fields) = self { return fields[key] ?? .nilValue }
        return .nilValue
    }
}

extension ScriptValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByFloatLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(arrayLiteral elements: ScriptValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, ScriptValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
