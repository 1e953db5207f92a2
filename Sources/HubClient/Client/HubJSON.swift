import Foundation
import JSONKit

/// A JSON value as the Hub sends and accepts it.
///
/// Numbers are kept as `Double`; integral values within ±2^53 round-trip exactly and
/// are written without a fraction. Objects encode with sorted keys, so the same value
/// always produces the same bytes (the idempotency journal relies on that).
public enum HubJSON: Sendable, Equatable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([HubJSON])
    case object([String: HubJSON])

    /// The member `key` of an object, or nil for anything else.
    public subscript(key: String) -> HubJSON? {
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

    public var doubleValue: Double? {
        if case .number(let n) = self { return n }
        return nil
    }

    /// The number as an `Int` when it is integral and in range.
    public var intValue: Int? {
        guard case .number(let n) = self, n.rounded() == n, abs(n) < 9.0e15 else { return nil }
        return Int(n)
    }

    public var arrayValue: [HubJSON]? {
        if case .array(let a) = self { return a }
        return nil
    }

    public var objectValue: [String: HubJSON]? {
        if case .object(let o) = self { return o }
        return nil
    }

    public var isNull: Bool { self == .null }

    /// Parses `data` as one JSON document. Throws `HubJSONSyntaxError` on malformed input.
    public static func parse(_ data: Data) throws -> HubJSON {
        var builder = Builder()
        return try JSONReader.parse(data, maxDepth: maxDepth, into: &builder)
    }

    /// The canonical encoding: sorted keys, no escaped slashes, no whitespace, integral
    /// numbers without a fraction (non-finite numbers become null).
    public func encoded() -> Data {
        var out = [UInt8]()
        out.reserveCapacity(512)
        Self.write(self, into: &out)
        return Data(out)
    }

    /// The canonical encoding as a string.
    public var jsonText: String { String(decoding: encoded(), as: UTF8.self) }
}

extension HubJSON: Codable {
    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let b = try? container.decode(Bool.self) {
            self = .bool(b)
        } else if let n = try? container.decode(Double.self) {
            self = .number(n)
        } else if let s = try? container.decode(String.self) {
            self = .string(s)
        } else if let a = try? container.decode([HubJSON].self) {
            self = .array(a)
        } else {
            self = .object(try container.decode([String: HubJSON].self))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let b): try container.encode(b)
        case .number(let n):
            if n.rounded() == n, abs(n) < 9.0e15 {
                try container.encode(Int64(n))
            } else {
                try container.encode(n)
            }
        case .string(let s): try container.encode(s)
        case .array(let a): try container.encode(a)
        case .object(let o): try container.encode(o)
        }
    }
}

extension HubJSON: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: HubJSON...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, HubJSON)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    public init(nilLiteral: ()) { self = .null }
}
