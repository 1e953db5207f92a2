/// A malformed JSON document: what was wrong, and at which byte.
public struct JSONSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    /// Where it was found: the 0-based offset of the byte in the input.
    public var offset: Int

    public init(_ message: String, offset: Int) {
        self.message = message
        self.offset = offset
    }

    /// `invalid JSON at byte N: message`, counting bytes from 1.
    public var description: String { "invalid JSON at byte \(offset + 1): \(message)" }
}

/// Thrown by a `JSONBuilder` that refuses a well-formed value (a string that is not
/// UTF-8, a number out of its range): `JSONReader` reports it as a `JSONSyntaxError` at
/// the byte after the value. Any other error a builder throws passes through unchanged.
public struct JSONValueError: Error, Sendable, Equatable {
    public var message: String
    public init(_ message: String) { self.message = message }
}
