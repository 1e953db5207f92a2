/// An error a binding throws to Lua as a structured table
/// `{code=…, message=…, …fields}` with a `__tostring` of `"code: message"`, so a
/// recipe can `pcall` and branch on `err.code`.
public struct ScriptStructuredError: Error, Sendable, CustomStringConvertible {
    public var code: String
    public var message: String
    public var fields: [String: ScriptValue]

    public init(code: String, message: String, fields: [String: ScriptValue] = [:]) {
        self.code = code
        self.message = message
        self.fields = fields
    }

    public var description: String { "\(code): \(message)" }

    var tableValue: ScriptValue {
        var all = fields
        all["code"] = .string(code)
        all["message"] = .string(message)
        return .object(all)
    }
}

/// An error a binding throws to Lua as a plain message string. The caller's
/// `file:line:` is prepended, as Lua's own `luaL_error` does.
public struct ScriptMessageError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Asks the runtime to stop the run at once with a limit error (exit code 4):
/// uncatchable by `pcall`, like the memory and instruction limits.
public struct ScriptLimitError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
