import JSONKit

/// A value from the config file, as the (Lua) config loader hands it to
/// `JobDefinition(name:config:)`: JSONKit's one value. A data-only config holds
/// strings, integers (a whole float such as `600.0` arrives as one), other numbers,
/// booleans, lists (`.array`) and tables (`.object`); the loader refuses anything else,
/// `json.null` included.
public typealias JobConfigValue = JSONValue

extension JSONValue {
    /// What the value is, in the config file's (Lua's) words, for errors ("got an integer").
    var configKind: String {
        switch self {
        case .string: "a string"
        case .integer: "an integer"
        case .number: "a number"
        case .bool: "a boolean"
        case .array: "a list"
        case .object: "a table"
        case .null: "null"
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
