import Foundation
import JSONKit

/// A malformed JSON document: what was expected and at which byte.
public typealias HubJSONSyntaxError = JSONSyntaxError

extension HubJSON {
    /// The parser's nesting limit: deeper values are refused.
    static let maxDepth = 512
}

/// Builds `HubJSON` from JSON text (`JSONReader`) with the Hub's number rule
/// (`HubJSON.hubNumber`): ill-formed UTF-8 in strings becomes U+FFFD, and of a
/// repeated member the last one counts.
struct HubJSONBuilder: JSONBuilder {
    mutating func null() -> HubJSON { .null }
    mutating func bool(_ value: Bool) -> HubJSON { .bool(value) }

    mutating func number(_ number: JSONNumber) -> HubJSON {
        if let i = number.int64Value { return .hubNumber(i) }
        return .hubNumber(number.doubleValue)
    }

    mutating func string(_ string: JSONString) -> HubJSON { .string(string.repaired()) }
    mutating func beginObject() -> [String: HubJSON] { [:] }
    mutating func key(_ key: JSONString, in object: inout [String: HubJSON]) -> String { key.repaired() }
    mutating func member(_ key: String, _ value: HubJSON, in object: inout [String: HubJSON]) { object[key] = value }
    mutating func endObject(_ object: [String: HubJSON]) -> HubJSON { .object(object) }
    mutating func beginArray() -> [HubJSON] { [] }
    mutating func element(_ value: HubJSON, in array: inout [HubJSON]) { array.append(value) }
    mutating func endArray(_ array: [HubJSON]) -> HubJSON { .array(array) }
}
