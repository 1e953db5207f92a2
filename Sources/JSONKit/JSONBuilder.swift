/// What `JSONReader` builds as it reads: each user of the one parser turns JSON into
/// its own values (Lua's `ScriptValue`, the client's `HubJSON`, the sandbox's `JSON`,
/// canonical bytes), with no tree in between.
///
/// The reader calls, in document order: a scalar method per scalar; for an object
/// `beginObject`, then per member `key` (before its value is read) and `member`, then
/// `endObject`; for an array `beginArray`, then per element `willReadElement` and
/// `element`, then `endArray`. A method may throw `JSONValueError` to refuse a value
/// (reported as a syntax error at that point), or any other error to stop reading.
public protocol JSONBuilder {
    associatedtype Value
    associatedtype Key
    associatedtype Object
    associatedtype Array

    mutating func null() throws -> Value
    mutating func bool(_ value: Bool) throws -> Value
    mutating func number(_ number: JSONNumber) throws -> Value
    mutating func string(_ string: JSONString) throws -> Value

    mutating func beginObject() throws -> Object
    mutating func key(_ key: JSONString, in object: inout Object) throws -> Key
    mutating func member(_ key: Key, _ value: Value, in object: inout Object) throws
    mutating func endObject(_ object: Object) throws -> Value

    mutating func beginArray() throws -> Array
    mutating func willReadElement(in array: inout Array) throws
    mutating func element(_ value: Value, in array: inout Array) throws
    mutating func endArray(_ array: Array) throws -> Value
}

extension JSONBuilder {
    @inlinable public mutating func willReadElement(in array: inout Array) throws {}
}

/// A string as read: its UTF-8 bytes with escapes resolved (not yet checked to be valid
/// UTF-8). The bytes live only during the builder call that receives them.
public struct JSONString {
    public let bytes: UnsafeBufferPointer<UInt8>
    /// Whether the text had escapes (`bytes` then differs from the input).
    public let hadEscapes: Bool

    @inlinable
    public init(bytes: UnsafeBufferPointer<UInt8>, hadEscapes: Bool) {
        self.bytes = bytes
        self.hadEscapes = hadEscapes
    }

    /// The string, or nil when the bytes are not valid UTF-8.
    @inlinable public func validated() -> String? { String(validating: bytes, as: UTF8.self) }

    /// The string, with ill-formed UTF-8 replaced by U+FFFD.
    @inlinable public func repaired() -> String { String(decoding: bytes, as: UTF8.self) }

    @inlinable public var isASCII: Bool { bytes.allSatisfy { $0 < 0x80 } }
}

/// A number as read: its text, which follows RFC 8259's grammar
/// (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`). The bytes live only during the
/// builder call that receives them.
public struct JSONNumber {
    public let bytes: UnsafeBufferPointer<UInt8>

    @inlinable public init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    @inlinable public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// True when the text has neither a fraction nor an exponent.
    @inlinable
    public var isInteger: Bool {
        !bytes.contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }
    }

    /// The integer, when the text is one that fits `Int64` (the value `Int64(text)` gives).
    @inlinable
    public var int64Value: Int64? {
        guard isInteger, !bytes.isEmpty else { return nil }
        let negative = bytes[0] == UInt8(ascii: "-")
        var value: Int64 = 0
        var i = negative ? 1 : 0
        while i < bytes.count {
            let digit = Int64(bytes[i] &- UInt8(ascii: "0"))
            let (shifted, o1) = value.multipliedReportingOverflow(by: 10)
            let (next, o2) = negative ? shifted.subtractingReportingOverflow(digit) : shifted.addingReportingOverflow(digit)
            if o1 || o2 { return nil }
            value = next
            i += 1
        }
        return value
    }

    /// The nearest `Double` (what `Double(text)` gives, never nil for text of this
    /// grammar): ±infinity beyond its range.
    @inlinable public var doubleValue: Double { Double(text) ?? .nan }
}

/// Builds nothing: reading with it only checks that the input is JSON.
public struct JSONValidator: JSONBuilder {
    @inlinable public init() {}
    @inlinable public mutating func null() {}
    @inlinable public mutating func bool(_ value: Bool) {}
    @inlinable public mutating func number(_ number: JSONNumber) {}
    @inlinable public mutating func string(_ string: JSONString) {}
    @inlinable public mutating func beginObject() {}
    @inlinable public mutating func key(_ key: JSONString, in object: inout Void) {}
    @inlinable public mutating func member(_ key: Void, _ value: Void, in object: inout Void) {}
    @inlinable public mutating func endObject(_ object: Void) {}
    @inlinable public mutating func beginArray() {}
    @inlinable public mutating func element(_ value: Void, in array: inout Void) {}
    @inlinable public mutating func endArray(_ array: Void) {}
}
