import JSONKit

/// The Lua boundary's conversions between `ScriptValue` and JSONKit's `JSONValue`, with
/// the bridging rules of `docs/bridging.md` (the same as `JSONCodec`'s): integers stay
/// integers and floats floats, `nil` and `json.null` are null.
extension ScriptValue {
    /// The value as Lua sees it: `.integer` and `.number` keep their kind, null is
    /// `json.null`.
    public init(_ json: JSONValue) {
        switch json {
        case .null: self = .null
        case .bool(let b): self = .bool(b)
        case .integer(let i): self = .integer(i)
        case .number(let d): self = .number(d)
        case .string(let s): self = .string(s)
        case .array(let items): self = .array(items.map(ScriptValue.init))
        case .object(let members): self = .object(members.mapValues(ScriptValue.init))
        }
    }
}

extension JSONValue {
    /// The JSON form of `value`, refused as `JSONCodec.encode` refuses it.
    /// - Throws: `JSONCodec.Error` for a string that is not UTF-8, NaN or an infinity,
    ///   a function, a handle, or nesting deeper than `JSONCodec.maxDepth`.
    public init(_ value: ScriptValue) throws {
        self = try Self.converting(value, depth: 0)
    }

    private static func converting(_ value: ScriptValue, depth: Int) throws -> JSONValue {
        guard depth < JSONCodec.maxDepth else {
            throw JSONCodec.Error("cannot encode: nesting deeper than \(JSONCodec.maxDepth) levels (a cycle?)")
        }
        switch value {
        case .nilValue, .null: return .null
        case .bool(let b): return .bool(b)
        case .integer(let i): return .integer(i)
        case .number(let d):
            guard d.isFinite else { throw JSONCodec.Error("cannot encode \(d) (JSON has no NaN or infinity)") }
            return .number(d)
        case .string(let s): return .string(s)
        case .bytes: throw JSONCodec.Error("cannot encode a string that is not valid UTF-8")
        case .function: throw JSONCodec.Error("cannot encode a function")
        case .handle(let h): throw JSONCodec.Error("cannot encode \(h): an opaque handle has no value to encode")
        case .array(let items): return .array(try items.map { try converting($0, depth: depth + 1) })
        case .object(let fields): return .object(try fields.mapValues { try converting($0, depth: depth + 1) })
        }
    }
}
