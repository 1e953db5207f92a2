import Foundation
import JSONKit

/// The little JSON Dispatch speaks, read and written with JSONKit (the one codec and
/// its one value, `JSONValue`): a request body of two strings, and answers that are
/// flat objects or `{"error":{…}}`.
enum DispatchJSON {
    static let maxDepth = 32

    /// The value of `data`, or nil when it is not JSON.
    static func parse(_ data: Data) -> JSONValue? {
        var builder = JSONValue.Builder()
        return try? JSONReader.parse(data, maxDepth: maxDepth, into: &builder)
    }

    /// `{"body":…,"title":…}`: canonical (sorted keys), so one notification always
    /// encodes to the same bytes, which the server's idempotency replay compares.
    static func encodeNotification(title: String, body: String) -> Data {
        Data(JSONValue.object(["title": .string(title), "body": .string(body)]).canonicalBytes)
    }
}

extension JSONValue {
    /// The integer when the text was one (`3`, not `3.0`).
    var integerText: Int64? {
        if case .integer(let i) = self { return i }
        return nil
    }
}
