import JSONKit

/// A JSON tree for the tests: what `JSONReader` hands its builder, kept as read
/// (numbers as their text, members in order).
enum TestValue: Equatable {
    case null
    case bool(Bool)
    case number(String, integer: Bool)
    case string(String)
    case array([TestValue])
    case object([Member])

    struct Member: Equatable {
        var key: String
        var value: TestValue
    }

    /// Reads `text` with a depth limit of `maxDepth`.
    static func parse(_ text: String, maxDepth: Int = 100) throws -> TestValue {
        var builder = Builder()
        var bytes = Array(text.utf8)
        return try bytes.withUnsafeMutableBufferPointer { try JSONReader.parse(UnsafeBufferPointer($0), maxDepth: maxDepth, into: &builder) }
    }

    /// Strings must be UTF-8 (`JSONValueError` otherwise).
    struct Builder: JSONBuilder {
        mutating func null() -> TestValue { .null }
        mutating func bool(_ value: Bool) -> TestValue { .bool(value) }
        mutating func number(_ number: JSONNumber) -> TestValue { .number(number.text, integer: number.isInteger) }

        mutating func string(_ string: JSONString) throws -> TestValue {
            guard let s = string.validated() else { throw JSONValueError("string is not valid UTF-8") }
            return .string(s)
        }

        mutating func beginObject() -> [Member] { [] }
        mutating func key(_ key: JSONString, in object: inout [Member]) -> String { key.repaired() }
        mutating func member(_ key: String, _ value: TestValue, in object: inout [Member]) { object.append(Member(key: key, value: value)) }
        mutating func endObject(_ object: [Member]) -> TestValue { .object(object) }
        mutating func beginArray() -> [TestValue] { [] }
        mutating func element(_ value: TestValue, in array: inout [TestValue]) { array.append(value) }
        mutating func endArray(_ array: [TestValue]) -> TestValue { .array(array) }
    }
}
