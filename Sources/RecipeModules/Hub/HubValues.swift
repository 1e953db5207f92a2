import Foundation
import HubClient
import JSONKit
import ScriptHost

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
    /// A write's body from the recipe's table, converted once, with the Hub's number
    /// rule (`HubJSON.hubNumber`): a float with no fraction is sent as an integer, an
    /// integer beyond ±9·10^15 as the float it rounds to. `nil`, `json.null`, strings
    /// that are not UTF-8 and functions become null.
    /// - Throws: `JSONCodec.Error` for NaN or an infinity, or nesting deeper than
    ///   `JSONCodec.maxDepth`.
    init(hubBody value: ScriptValue) throws {
        self = try Self.hubBody(value, depth: 0)
    }

    private static func hubBody(_ value: ScriptValue, depth: Int) throws -> HubJSON {
        guard depth < JSONCodec.maxDepth else {
            throw JSONCodec.Error("cannot encode: nesting deeper than \(JSONCodec.maxDepth) levels (a cycle?)")
        }
        switch value {
        case .nilValue, .null, .bytes, .function, .handle: return .null
        case .bool(let b): return .bool(b)
        case .integer(let i): return .hubNumber(i)
        case .number(let d):
            guard d.isFinite else { throw JSONCodec.Error("cannot encode \(d) (JSON has no NaN or infinity)") }
            return .hubNumber(d)
        case .string(let s): return .string(s)
        case .array(let items): return .array(try items.map { try hubBody($0, depth: depth + 1) })
        case .object(let fields): return .object(try fields.mapValues { try hubBody($0, depth: depth + 1) })
        }
    }
}

extension BindingCall {
    /// The body of a write from the fields of argument `n` (see `HubJSON(hubBody:)`).
    /// - Throws: `ScriptStructuredError` `invalid_body` naming the argument and what
    ///   JSON cannot hold; nothing was derived, journalled or sent.
    func body(_ fields: [String: ScriptValue], at n: Int) throws -> HubJSON {
        do { return try HubJSON(hubBody: .object(fields)) } catch let error as JSONCodec.Error {
            throw ScriptStructuredError(code: "invalid_body", message:
                "cannot send argument #\(n) of \(functionName) as a body: \(error)")
        }
    }
}
