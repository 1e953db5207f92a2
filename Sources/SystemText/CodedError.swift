/// An error callers branch on by `code`, with a message that says what went wrong and,
/// where it can, what to do. `Domain` only keeps the kinds apart (`JournalError`,
/// `PlanError`): each declares its codes in a constrained extension of `Code`.
public struct CodedError<Domain: CodedErrorDomain>: Error, Sendable, CustomStringConvertible, Equatable {
    /// An extensible error code.
    public struct Code: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

/// A family of `CodedError`s (a caseless enum per kind).
public protocol CodedErrorDomain: Sendable {}
