import Foundation
import HubClient
import ScriptHost

extension ScriptValue {
    /// A Hub JSON value as Lua sees it: integral numbers become integers (ids, counts,
    /// versions), other numbers floats, null becomes `json.null`.
    public init(_ json: HubJSON) {
        switch json {
        case .null: self = .null
        case .bool(let b): self = .bool(b)
        case .number(let d):
            if d.rounded() == d, abs(d) < 9.0e15 { self = .integer(Int64(d)) } else { self = .number(d) }
        case .string(let s): self = .string(s)
        case .array(let items): self = .array(items.map(ScriptValue.init))
        case .object(let fields): self = .object(fields.mapValues(ScriptValue.init))
        }
    }
}

extension HubError: ScriptStructuredErrorConvertible {
    /// The table a recipe's `pcall` receives: `code`, `message`, `status`,
    /// `request_id`, `details`, `hint`.
    public var scriptError: ScriptStructuredError {
        var fields: [String: ScriptValue] = [:]
        if let status { fields["status"] = .integer(Int64(status)) }
        if let requestID { fields["request_id"] = .string(requestID) }
        if let details { fields["details"] = ScriptValue(details) }
        if !hint.isEmpty { fields["hint"] = .string(hint) }
        return ScriptStructuredError(code: code, message: message, fields: fields)
    }
}

extension HubJSON {
    /// The JSON form of a script value: integers and floats become numbers, `nil` and
    /// `json.null` become null. Non-UTF-8 strings and functions become null (callers
    /// validate values before they reach the wire).
    public init(_ value: ScriptValue) {
        switch value {
        case .nilValue, .null, .bytes, .function, .handle: self = .null
        case .bool(let b): self = .bool(b)
        case .integer(let i): self = .number(Double(i))
        case .number(let d): self = .number(d)
        case .string(let s): self = .string(s)
        case .array(let items): self = .array(items.map(HubJSON.init))
        case .object(let fields): self = .object(fields.mapValues(HubJSON.init))
        }
    }
}
