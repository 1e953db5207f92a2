import Foundation
// The client's API speaks `JSONValue` (as `HubJSON`): whoever imports the client can use it.
@_exported import JSONKit

/// A JSON value as the Hub sends and accepts it: JSONKit's `JSONValue`, with the Hub's
/// number rule applied where values enter (`parse`, and the recipe modules' conversion
/// of a Lua body).
///
/// The Hub's numbers are JSON numbers (doubles): a whole number within ±9·10^15 is an
/// `.integer` (ids, counts, versions), any other number a `.number` — so `1.0` reads
/// as `1`, and a whole number beyond that range as the float it rounds to. The
/// canonical bytes (`encoded()`: sorted keys, no whitespace) of the same value are
/// always the same; the idempotency journal relies on that.
public typealias HubJSON = JSONValue

extension JSONValue {
    /// Parses `data` as one JSON document with the Hub's number rule. Throws
    /// `HubJSONSyntaxError` on malformed input.
    public static func parse(_ data: Data) throws -> HubJSON {
        var builder = HubJSONBuilder()
        return try JSONReader.parse(data, maxDepth: maxDepth, into: &builder)
    }

    /// The canonical encoding (`canonicalBytes`).
    public func encoded() -> Data { Data(canonicalBytes) }

    /// The canonical encoding as a string.
    public var jsonText: String { String(decoding: canonicalBytes, as: UTF8.self) }

    /// A Hub number: a whole `d` within ±9·10^15 is an `.integer`, anything else a `.number`.
    public static func hubNumber(_ d: Double) -> HubJSON {
        d.rounded() == d && abs(d) < 9.0e15 ? .integer(Int64(d)) : .number(d)
    }

    /// A Hub number: `i` itself within ±9·10^15, beyond it the float it rounds to.
    public static func hubNumber(_ i: Int64) -> HubJSON {
        abs(Double(i)) < 9.0e15 ? .integer(i) : .number(Double(i))
    }
}
