/// A JSON value: the one tree below the Lua boundary (the Hub client's requests and
/// answers, the write path's bodies). Lua's `ScriptValue` converts to and from it once,
/// at the boundary.
///
/// Numbers keep the kind their text had: `.integer` for a whole number that fits
/// `Int64`, `.number` for any other. Equality (and hashing) compares numbers by value,
/// as JSON does: `.integer(1) == .number(1.0)`. The canonical bytes (`canonicalBytes`)
/// keep the kind: `1` and `1.0`.
public enum JSONValue: Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The member `key` of an object, or nil for anything else.
    @inlinable
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// The number as a `Double` (an integer beyond ±2^53 rounded to the nearest).
    public var doubleValue: Double? {
        switch self {
        case .integer(let i): Double(i)
        case .number(let d): d
        default: nil
        }
    }

    /// The number as an `Int` when it is whole and within ±9·10^15.
    public var intValue: Int? {
        switch self {
        case .integer(let i) where i.magnitude < 9_000_000_000_000_000: Int(i)
        case .number(let d) where d.rounded() == d && abs(d) < 9.0e15: Int(d)
        default: nil
        }
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    public var objectValue: [String: JSONValue]? {
        if case .object(let o) = self { return o }
        return nil
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

extension JSONValue: Equatable, Hashable {
    /// Numbers are equal when they denote the same value (`1 == 1.0`); everything else
    /// compares as it is.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case let (.bool(a), .bool(b)): a == b
        case let (.integer(a), .integer(b)): a == b
        case let (.number(a), .number(b)): a == b
        case let (.integer(i), .number(d)), let (.number(d), .integer(i)): Int64(exactly: d) == i
        case let (.string(a), .string(b)): a == b
        case let (.array(a), .array(b)): a == b
        case let (.object(a), .object(b)): a == b
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let b): hasher.combine(1); hasher.combine(b)
        case .integer(let i): hasher.combine(2); hasher.combine(i)
        case .number(let d):
            // A whole number hashes as the integer it equals.
            if let i = Int64(exactly: d) { hasher.combine(2); hasher.combine(i) } else { hasher.combine(3); hasher.combine(d) }
        case .string(let s): hasher.combine(4); hasher.combine(s)
        case .array(let a): hasher.combine(5); hasher.combine(a)
        case .object(let o): hasher.combine(6); hasher.combine(o)
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    public init(nilLiteral: ()) { self = .null }
}

// MARK: Text

extension JSONValue {
    /// The canonical bytes (`JSONWriter`): keys sorted, no whitespace, integers in
    /// decimal, other numbers as floats (`1.0`, `2.5e+20`), non-finite ones as `null`.
    /// The same value always gives the same bytes: request bodies, their idempotency
    /// keys and digests rely on it.
    public var canonicalBytes: [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(256)
        write(into: &out)
        return out
    }

    /// Appends the canonical bytes to `out`.
    public func write(into out: inout [UInt8]) {
        switch self {
        case .null: JSONWriter.writeNull(into: &out)
        case .bool(let b): JSONWriter.writeBool(b, into: &out)
        case .integer(let i): JSONWriter.writeInteger(i, into: &out)
        case .number(let d): if d.isFinite { JSONWriter.writeFloat(d, into: &out) } else { JSONWriter.writeNull(into: &out) }
        case .string(let s): JSONWriter.writeString(s, into: &out)
        case .array(let items): JSONWriter.writeArray(items, into: &out) { item, out in item.write(into: &out) }
        case .object(let members): JSONWriter.writeCanonicalObject(members, into: &out) { member, out in member.write(into: &out) }
        }
    }

    /// Parses one JSON document (`JSONReader`, strict): whole numbers that fit `Int64`
    /// become `.integer`, other numbers `.number`, ill-formed UTF-8 in strings becomes
    /// U+FFFD, and of a repeated member the last one counts. Throws `JSONSyntaxError`.
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) throws -> JSONValue {
        var builder = Builder()
        return try JSONReader.parse(bytes, maxDepth: maxDepth, into: &builder)
    }

    /// Builds `JSONValue`s as `parse` describes.
    public struct Builder: JSONBuilder {
        @inlinable public init() {}

        @inlinable public mutating func null() -> JSONValue { .null }
        @inlinable public mutating func bool(_ value: Bool) -> JSONValue { .bool(value) }
        @inlinable public mutating func number(_ number: JSONNumber) -> JSONValue { number.int64Value.map(JSONValue.integer) ?? .number(number.doubleValue) }
        @inlinable public mutating func string(_ string: JSONString) -> JSONValue { .string(string.repaired()) }
        @inlinable public mutating func beginObject() -> [String: JSONValue] { [:] }
        @inlinable public mutating func key(_ key: JSONString, in object: inout [String: JSONValue]) -> String { key.repaired() }
        @inlinable public mutating func member(_ key: String, _ value: JSONValue, in object: inout [String: JSONValue]) { object[key] = value }
        @inlinable public mutating func endObject(_ object: [String: JSONValue]) -> JSONValue { .object(object) }
        @inlinable public mutating func beginArray() -> [JSONValue] { [] }
        @inlinable public mutating func element(_ value: JSONValue, in array: inout [JSONValue]) { array.append(value) }
        @inlinable public mutating func endArray(_ array: [JSONValue]) -> JSONValue { .array(array) }
    }
}

/// A JSON value and its canonical bytes, written once: what a write derives its key
/// and digest from is then, byte for byte, what it sends.
public struct CanonicalJSON: Sendable, Equatable {
    public let value: JSONValue
    public let bytes: [UInt8]

    public init(_ value: JSONValue) {
        self.value = value
        self.bytes = value.canonicalBytes
    }

    /// The bytes as text.
    public var text: String { String(decoding: bytes, as: UTF8.self) }
}
