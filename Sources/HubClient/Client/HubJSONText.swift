import Foundation
import JSONKit

/// A malformed JSON document: what was expected and at which byte.
public typealias HubJSONSyntaxError = JSONSyntaxError

extension HubJSON {
    /// The parser's nesting limit: deeper values are refused.
    static let maxDepth = 512

    /// Builds `HubJSON` from JSON text (`JSONReader`): numbers become `Double`s, ill-formed
    /// UTF-8 in strings becomes U+FFFD, and of a repeated member the last one counts.
    struct Builder: JSONBuilder {
        mutating func null() -> HubJSON { .null }
        mutating func bool(_ value: Bool) -> HubJSON { .bool(value) }

        mutating func number(_ number: JSONNumber) -> HubJSON { .number(number.int64Value.map(Double.init) ?? number.doubleValue) }

        mutating func string(_ string: JSONString) -> HubJSON { .string(string.repaired()) }
        mutating func beginObject() -> [String: HubJSON] { [:] }
        mutating func key(_ key: JSONString, in object: inout [String: HubJSON]) -> String { key.repaired() }
        mutating func member(_ key: String, _ value: HubJSON, in object: inout [String: HubJSON]) { object[key] = value }
        mutating func endObject(_ object: [String: HubJSON]) -> HubJSON { .object(object) }
        mutating func beginArray() -> [HubJSON] { [] }
        mutating func element(_ value: HubJSON, in array: inout [HubJSON]) { array.append(value) }
        mutating func endArray(_ array: [HubJSON]) -> HubJSON { .array(array) }
    }

    /// The canonical writer (`JSONWriter`, keys sorted): integral numbers within ±9·10^15
    /// are written without a fraction, other finite ones as floats, the rest as null.
    static func write(_ value: HubJSON, into out: inout [UInt8]) {
        switch value {
        case .null: JSONWriter.writeNull(into: &out)
        case .bool(let b): JSONWriter.writeBool(b, into: &out)
        case .number(let n):
            if n.rounded() == n, abs(n) < 9.0e15 {
                JSONWriter.writeInteger(Int64(n), into: &out)
            } else if n.isFinite {
                JSONWriter.writeFloat(n, into: &out)
            } else {
                JSONWriter.writeNull(into: &out)
            }
        case .string(let s): JSONWriter.writeString(s, into: &out)
        case .array(let items): JSONWriter.writeArray(items, into: &out) { item, out in write(item, into: &out) }
        case .object(let members): JSONWriter.writeCanonicalObject(members, into: &out) { member, out in write(member, into: &out) }
        }
    }
}
