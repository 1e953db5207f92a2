import Foundation
import JSONKit

/// JSON encoding and decoding of `ScriptValue`, with the bridging rules of
/// `docs/bridging.md`: integers stay integers (`1`), floats stay floats (`1.0`),
/// object keys are written sorted (canonical form, used for body digests),
/// `.nilValue` and `.null` encode as `null`, non-UTF-8 strings, NaN, infinities and
/// functions are refused, and nesting deeper than `maxDepth` is refused.
public enum JSONCodec {
    public static let maxDepth = 100

    public struct Error: Swift.Error, CustomStringConvertible, Equatable {
        public let message: String
        public var description: String { message }
        public init(_ message: String) { self.message = message }
    }

    // MARK: Encoding

    /// Encodes `value` as compact canonical JSON.
    public static func encode(_ value: ScriptValue) throws -> String {
        String(decoding: try encodeBytes(value), as: UTF8.self)
    }

    public static func encodeData(_ value: ScriptValue) throws -> Data {
        Data(try encodeBytes(value))
    }

    /// The canonical JSON of `value` as UTF-8 bytes (the fast path: no String building).
    /// With a `budget`, the output is charged as it grows (twice its size: the buffer
    /// doubles), so a value whose JSON is far larger than the value itself (strings of
    /// control characters grow sixfold) stops at the memory cap while it is built.
    public static func encodeBytes(_ value: ScriptValue, budget: MemoryBudget? = nil) throws -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(256)
        try write(value, into: &out, depth: 0, budget: budget)
        return out
    }

    private static func write(_ value: ScriptValue, into out: inout [UInt8], depth: Int, budget: MemoryBudget?) throws {
        guard depth < maxDepth else {   // the same limit as decoding: maxDepth levels at most
            throw Error("cannot encode: nesting deeper than \(maxDepth) levels (a cycle?)")
        }
        switch value {
        case .nilValue, .null: JSONWriter.writeNull(into: &out)
        case .bool(let b): JSONWriter.writeBool(b, into: &out)
        case .integer(let i): JSONWriter.writeInteger(i, into: &out)
        case .number(let d):
            guard d.isFinite else { throw Error("cannot encode \(d) (JSON has no NaN or infinity)") }
            JSONWriter.writeFloat(d, into: &out)
        case .string(let s):
            // Charged before it is written: escaping can make it six times longer.
            if let budget, s.utf8.count > 64 { try budget.charge(2 * JSONWriter.escapedSize(s)) }
            JSONWriter.writeString(s, into: &out)
        case .bytes: throw Error("cannot encode a string that is not valid UTF-8")
        case .function: throw Error("cannot encode a function")
        case .handle(let h): throw Error("cannot encode \(h): an opaque handle has no value to encode")
        case .array(let items):
            try JSONWriter.writeArray(items, into: &out) { item, out in
                try write(item, into: &out, depth: depth + 1, budget: budget)
            }
        case .object(let fields):
            try JSONWriter.writeCanonicalObject(fields, into: &out) { field, out in
                try write(field, into: &out, depth: depth + 1, budget: budget)
            }
        }
    }

    /// An upper bound of the size of `value`'s JSON, computed without building it
    /// (to decide whether to show a value at all).
    public static func estimatedSize(_ value: ScriptValue) -> Int {
        switch value {
        case .string(let s): return JSONWriter.escapedSize(s)
        case .bytes(let b): return b.count * 6 + 2
        case .array(let items): return items.reduce(2) { $0 + estimatedSize($1) + 1 }
        case .object(let fields): return fields.reduce(2) { $0 + JSONWriter.escapedSize($1.key) + estimatedSize($1.value) + 2 }
        default: return 32
        }
    }

    // MARK: Decoding

    /// Decodes one JSON document. Arrays become `.array`, objects `.object`, `null`
    /// becomes `.null`; numbers without a fraction or exponent become integers.
    public static func decode(_ text: String) throws -> ScriptValue {
        try decode(Data(text.utf8))
    }

    public static func decode(_ data: Data) throws -> ScriptValue {
        try data.withUnsafeBytes { try decode(bytes: $0) }
    }

    /// Decodes one JSON document from `bytes`, charging what it builds to `budget`
    /// (which throws `ScriptMemoryLimitError` when the run's memory cap is reached).
    /// The bytes go straight into `ScriptValue`s (`JSONReader` builds no tree of its own).
    public static func decode(bytes raw: UnsafeRawBufferPointer, budget: MemoryBudget? = nil) throws -> ScriptValue {
        var builder = ScriptValueBuilder(budget: budget)
        do {
            return try JSONReader.parse(raw.bindMemory(to: UInt8.self), maxDepth: maxDepth, into: &builder)
        } catch let e as JSONSyntaxError {
            throw Error(e.description)
        }
    }

    /// Builds `ScriptValue`s from JSON: numbers without a fraction or exponent that fit
    /// `Int64` become integers, other numbers floats (one too large for a float is
    /// refused); strings must be UTF-8. Charges the budget as it builds, estimates on
    /// the high side (`MemoryBudget.Cost`).
    struct ScriptValueBuilder: JSONBuilder {
        let budget: MemoryBudget?

        mutating func null() throws -> ScriptValue {
            try budget?.charge(MemoryBudget.Cost.value)
            return .null
        }

        mutating func bool(_ value: Bool) throws -> ScriptValue {
            try budget?.charge(MemoryBudget.Cost.value)
            return .bool(value)
        }

        mutating func number(_ number: JSONNumber) throws -> ScriptValue {
            try budget?.charge(MemoryBudget.Cost.value)
            if let i = number.int64Value { return .integer(i) }
            let d = number.doubleValue
            guard d.isFinite else { throw JSONValueError("number '\(number.text)' is out of range") }
            return .number(d)
        }

        mutating func string(_ string: JSONString) throws -> ScriptValue {
            try budget?.charge(MemoryBudget.Cost.value)
            return .string(try charged(string))
        }

        /// A string, charged to the budget when it lives on the heap (over 15 bytes).
        func charged(_ string: JSONString) throws -> String {
            guard let s = string.validated() else { throw JSONValueError("string is not valid UTF-8") }
            if let budget, string.bytes.count > 15 { try budget.charge(string.bytes.count + MemoryBudget.Cost.string) }
            return s
        }

        mutating func beginObject() throws -> [String: ScriptValue] {
            try budget?.charge(MemoryBudget.Cost.value + MemoryBudget.Cost.container)
            return [:]
        }

        mutating func key(_ key: JSONString, in object: inout [String: ScriptValue]) throws -> String {
            let s = try charged(key)
            try budget?.charge(MemoryBudget.Cost.entry)
            return s
        }

        mutating func member(_ key: String, _ value: ScriptValue, in object: inout [String: ScriptValue]) {
            object[key] = value
        }

        mutating func endObject(_ object: [String: ScriptValue]) -> ScriptValue { .object(object) }

        mutating func beginArray() throws -> [ScriptValue] {
            try budget?.charge(MemoryBudget.Cost.value + MemoryBudget.Cost.container)
            return []
        }

        mutating func element(_ value: ScriptValue, in array: inout [ScriptValue]) { array.append(value) }

        mutating func endArray(_ array: [ScriptValue]) -> ScriptValue { .array(array) }
    }
}
