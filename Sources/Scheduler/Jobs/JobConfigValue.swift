/// A value from the config file, as the (Lua) config loader hands it to
/// `JobDefinition(name:config:)`: the few shapes a data-only config can hold.
public enum JobConfigValue: Hashable, Sendable {
    case string(String)
    case int(Int)
    /// A number with a fraction (a Lua float that is not a whole number).
    case number(Double)
    case bool(Bool)
    /// A sequence (a Lua table with keys 1…n).
    case list([JobConfigValue])
    /// A table with string keys.
    case table([String: JobConfigValue])

    /// What the value is, for errors ("got an integer").
    var kind: String {
        switch self {
        case .string: "a string"
        case .int: "an integer"
        case .number: "a number"
        case .bool: "a boolean"
        case .list: "a list"
        case .table: "a table"
        }
    }
}

/// A job parameter: a string or a list of strings, as `--param name=value` would give
/// them (a number or boolean in the config becomes its text, `30` or `true`; the
/// recipe's manifest types it).
public enum JobParam: Hashable, Sendable {
    case string(String)
    case list([String])
}
