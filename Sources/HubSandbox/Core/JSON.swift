import Foundation
import JSONKit

/// A JSON value with ordered object keys, so responses are byte-stable.
enum JSON: Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSON])
    case object([(String, JSON)])
    /// JSON text this module's writer already produced, emitted verbatim (lists render
    /// their rows straight into bytes). Opaque: subscripts and accessors see nothing in it.
    case raw([UInt8])

    static func == (lhs: JSON, rhs: JSON) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.int(a), .int(b)): return a == b
        case let (.double(a), .double(b)): return a == b
        case let (.string(a), .string(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.object(a), .object(b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        case let (.raw(a), .raw(b)): return a == b
        default: return false
        }
    }

    /// The member `key` of an object, or nil.
    subscript(key: String) -> JSON? {
        if case .object(let pairs) = self { return pairs.first { $0.0 == key }?.1 }
        return nil
    }

    var stringValue: String? { if case .string(let s) = self { return s }; return nil }
    var boolValue: Bool? { if case .bool(let b) = self { return b }; return nil }
    var isNull: Bool { self == .null }
    var objectKeys: [String] { if case .object(let p) = self { return p.map(\.0) }; return [] }

    /// `.string(s)` or `.null` when `s` is nil.
    static func str(_ s: String?) -> JSON { s.map(JSON.string) ?? .null }
    /// An RFC 3339 UTC timestamp, or `.null`.
    static func time(_ t: Int?) -> JSON { t.map { .string(Time.format($0)) } ?? .null }
}

/// Parses JSON text with the one parser (`JSONReader`, strict RFC 8259): objects keep
/// their members' order (a repeated member replaces the first in place), numbers
/// without a fraction or exponent that fit `Int` are `.int`, ill-formed UTF-8 becomes
/// U+FFFD. Nesting deeper than 64 levels is refused. Throws `JSONSyntaxError`.
enum JSONParser {
    static let maxDepth = 64

    static func parse(_ data: Data) throws -> JSON {
        var builder = Builder()
        return try JSONReader.parse(data, maxDepth: maxDepth, into: &builder)
    }

    struct Builder: JSONBuilder {
        mutating func null() -> JSON { .null }
        mutating func bool(_ value: Bool) -> JSON { .bool(value) }

        mutating func number(_ number: JSONNumber) -> JSON { number.int64Value.map { .int(Int($0)) } ?? .double(number.doubleValue) }

        mutating func string(_ string: JSONString) -> JSON { .string(string.repaired()) }
        mutating func beginObject() -> [(String, JSON)] { [] }
        mutating func key(_ key: JSONString, in object: inout [(String, JSON)]) -> String { key.repaired() }

        mutating func member(_ key: String, _ value: JSON, in pairs: inout [(String, JSON)]) {
            if let idx = pairs.firstIndex(where: { $0.0 == key }) { pairs[idx].1 = value } else { pairs.append((key, value)) }
        }

        mutating func endObject(_ pairs: [(String, JSON)]) -> JSON { .object(pairs) }
        mutating func beginArray() -> [JSON] { [] }
        mutating func element(_ value: JSON, in array: inout [JSON]) { array.append(value) }
        mutating func endArray(_ array: [JSON]) -> JSON { .array(array) }
    }
}
