import ScriptHost

/// Raw functions behind a Lua wrapper report expected errors as `nil, message`
/// instead of throwing.
///
/// A message thrown by a binding gets the position of its Lua caller, which for a
/// raw function is the wrapper chunk (`export:12:`), not the recipe. Returning the
/// message lets the wrapper raise it with `error(message, 2)`, so it carries the
/// recipe's `file:line`. Limit errors and structured errors still propagate.
enum SoftFailure {
    static func wrap(_ body: () throws -> ScriptResult) throws -> ScriptResult {
        do { return try body() } catch let error as ScriptMessageError {
            return .values([.nilValue, .string(error.message)])
        }
    }

    /// The detail of a `bad argument #n to 'name' (detail)` message, or the message.
    static func detail(of error: ScriptMessageError) -> String {
        let message = error.message
        guard message.hasPrefix("bad argument #"), message.hasSuffix(")"),
              let open = message.range(of: "' (") else { return message }
        return String(message[open.upperBound..<message.index(before: message.endIndex)])
    }

    /// `a string`, `a table`, `json.null`, for "row 3 is a string" messages.
    static func described(typeName: String) -> String {
        switch typeName {
        case "null": "json.null"
        case "nil", "no value": "nil"
        default: "a \(typeName)"
        }
    }

    /// `text` quoted for a message, with `'`, `\`, control and format characters
    /// (e.g. `\u{202E}`, which would reverse the rest of the line) escaped,
    /// cut at `limit` characters (then ending in `…`).
    static func quoted(_ text: String, limit: Int = 200) -> String {
        var out = ""
        for scalar in text.unicodeScalars.prefix(limit) {
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "'": out += "\\'"
            case "\\": out += "\\\\"
            case let c where c.value < 0x20 || c.value == 0x7F:
                out += "\\x" + String(c.value, radix: 16, uppercase: true).leftPadded(to: 2)
            case let c where [.control, .format, .lineSeparator, .paragraphSeparator].contains(c.properties.generalCategory):
                out += "\\u{" + String(c.value, radix: 16, uppercase: true).leftPadded(to: 4) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        if text.unicodeScalars.count > limit { out += "…" }
        return "'\(out)'"
    }
}

extension String {
    func leftPadded(to width: Int, with pad: Character = "0") -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}
