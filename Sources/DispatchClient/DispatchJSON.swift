import Foundation
import JSONKit

/// The little JSON Dispatch speaks, read and written with JSONKit (the one codec): a
/// request body of two strings, and answers that are flat objects or `{"error":{…}}`.
enum DispatchJSON: Equatable {
    case null, bool(Bool), number(Double, integer: Int64?), string(String), array([DispatchJSON])
    case object([String: DispatchJSON])

    static let maxDepth = 32

    /// The value of `data`, or nil when it is not JSON.
    static func parse(_ data: Data) -> DispatchJSON? {
        var builder = Builder()
        return try? JSONReader.parse(data, maxDepth: maxDepth, into: &builder)
    }

    subscript(key: String) -> DispatchJSON? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    var string: String? { if case .string(let s) = self { return s }; return nil }
    var integer: Int64? { if case .number(_, let i) = self { return i }; return nil }

    /// `{"body":…,"title":…}`: canonical (sorted keys), so one notification always
    /// encodes to the same bytes, which the server's idempotency replay compares.
    static func encodeNotification(title: String, body: String) -> Data {
        var out: [UInt8] = []
        JSONWriter.writeCanonicalObject(["title": title, "body": body], into: &out) { value, out in
            JSONWriter.writeString(value, into: &out)
        }
        return Data(out)
    }

    struct Builder: JSONBuilder {
        mutating func null() -> DispatchJSON { .null }
        mutating func bool(_ value: Bool) -> DispatchJSON { .bool(value) }
        mutating func number(_ number: JSONNumber) -> DispatchJSON {
            .number(number.doubleValue, integer: number.isInteger ? number.int64Value : nil)
        }
        mutating func string(_ string: JSONString) -> DispatchJSON { .string(string.repaired()) }
        mutating func beginObject() -> [String: DispatchJSON] { [:] }
        mutating func key(_ key: JSONString, in object: inout [String: DispatchJSON]) -> String { key.repaired() }
        mutating func member(_ key: String, _ value: DispatchJSON, in object: inout [String: DispatchJSON]) { object[key] = value }
        mutating func endObject(_ object: [String: DispatchJSON]) -> DispatchJSON { .object(object) }
        mutating func beginArray() -> [DispatchJSON] { [] }
        mutating func element(_ value: DispatchJSON, in array: inout [DispatchJSON]) { array.append(value) }
        mutating func endArray(_ array: [DispatchJSON]) -> DispatchJSON { .array(array) }
    }
}
