import CPostgres

/// A value bound to a statement parameter (sent in text format).
public enum PostgresValue: Sendable, Equatable {
    case int(Int)
    case text(String)
    case null
}

/// One row of a result, valid only inside the `query`/`first` callback it is handed to.
/// Columns are 0-based; values arrive in text format and are parsed here.
public struct PostgresRow {
    let result: OpaquePointer
    let row: Int32

    /// The number of columns.
    public var count: Int { Int(PQnfields(result)) }

    public func isNull(_ i: Int32) -> Bool { PQgetisnull(result, row, i) != 0 }

    /// Column `i` as text, nil for NULL.
    public func textOrNil(_ i: Int32) -> String? {
        guard !isNull(i), let p = PQgetvalue(result, row, i) else { return nil }
        return String(cString: p)
    }

    /// Column `i` as text ("" for NULL).
    public func text(_ i: Int32) -> String { textOrNil(i) ?? "" }

    /// Column `i` as an integer; nil for NULL or text that is not one (a `numeric`
    /// with an integral value, such as `sum(bigint)`, reads as its integer).
    public func intOrNil(_ i: Int32) -> Int? {
        guard let t = textOrNil(i) else { return nil }
        if let v = Int(t) { return v }
        if t.hasSuffix(".0"), let v = Int(t.dropLast(2)) { return v }
        return nil
    }

    /// Column `i` as an integer (0 for NULL).
    public func int(_ i: Int32) -> Int { intOrNil(i) ?? 0 }

    /// Column `i` as a boolean (`t`).
    public func bool(_ i: Int32) -> Bool { textOrNil(i) == "t" }
}
