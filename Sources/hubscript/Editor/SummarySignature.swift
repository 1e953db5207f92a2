import Foundation

/// A function's parameters and return value, read from the signature its one-line
/// summary starts with (`hub.users.get(id_or_email) -> user (…)`), the only structured
/// form the registry keeps. What cannot be read is `any`.
struct SummarySignature: Equatable {
    struct Param: Equatable {
        let name: String
        let type: String
        let optional: Bool
    }

    let params: [Param]
    /// The text after `->`, or nil when the summary shows no return value.
    let returns: String?

    /// The signature of `fullName` (`hub.users.get`) in `summary`, or nil when the summary
    /// does not show a call of it.
    static func parse(_ summary: String, fullName: String) -> SummarySignature? {
        let text = Array(summary)
        let name = Array(fullName)
        var start: Int?
        var i = 0
        while i + name.count < text.count {
            if Array(text[i..<(i + name.count)]) == name, text[i + name.count] == "(" || text[i + name.count] == "{",
               i == 0 || !(text[i - 1].isLetter || text[i - 1] == "." || text[i - 1] == "_") {
                start = i + name.count
                break
            }
            i += 1
        }
        guard let open = start, let close = matching(text, from: open) else { return nil }
        let inner = String(text[(open + 1)..<close])
        let items: [(String, Bool)] = text[open] == "{" ? [("{" + inner + "}", false)] : split(inner)
        var params: [Param] = []
        var tables = 0
        for (index, (item, optional)) in items.enumerated() {
            var param = Self.param(item, position: index + 1, tables: &tables,
                                   optionsTable: text[open] == "(" && index == items.count - 1, optional: optional)
            if optional && !param.optional { param = Param(name: param.name, type: param.type, optional: true) }
            var unique = param.name, n = 2
            while params.contains(where: { $0.name == unique }) { unique = param.name + String(n); n += 1 }
            params.append(Param(name: unique, type: param.type, optional: param.optional))
        }
        let rest = String(text[(close + 1)...])
        var returns: String?
        if let arrow = rest.range(of: "->") {
            returns = String(rest[arrow.upperBound...]).trimmingCharacters(in: .whitespaces)
        }
        return SummarySignature(params: params, returns: returns)
    }

    /// The index of the bracket closing the one at `open`.
    private static func matching(_ text: [Character], from open: Int) -> Int? {
        var depth = 0
        for j in open..<text.count {
            switch text[j] {
            case "(", "{", "[": depth += 1
            case ")", "}", "]":
                depth -= 1
                if depth == 0 { return j }
            default: break
            }
        }
        return nil
    }

    /// Top-level comma-separated items; those inside `[ … ]` are optional.
    private static func split(_ inner: String) -> [(String, Bool)] {
        var items: [(String, Bool)] = []
        var current = "", depth = 0, optionalDepth = 0, currentOptional = false
        func flush() {
            let item = current.trimmingCharacters(in: .whitespaces)
            if !item.isEmpty { items.append((item, currentOptional)) }
            current = ""
            currentOptional = optionalDepth > 0
        }
        for c in inner {
            switch c {
            case "[" where depth == 0:
                flush()
                optionalDepth += 1
                currentOptional = true
            case "]" where depth == 0:
                flush()
                optionalDepth = max(0, optionalDepth - 1)
                currentOptional = optionalDepth > 0
            case "," where depth == 0:
                flush()
            default:
                if c == "(" || c == "{" { depth += 1 }
                if c == ")" || c == "}" { depth -= 1 }
                current.append(c)
            }
        }
        flush()
        return items
    }

    /// `optionsTable`: the last argument of a call in parentheses, where a write's
    /// options (`{reason?, key?}`: the idempotency key) go.
    private static func param(_ item: String, position: Int, tables: inout Int, optionsTable: Bool, optional: Bool) -> Param {
        if item.hasPrefix("{") {
            tables += 1
            if optionsTable && item.contains("key?") { return Param(name: "opts", type: "table", optional: true) }
            return Param(name: tables == 1 && !optional ? "fields" : "options", type: "table", optional: false)
        }
        if item.hasPrefix("\"") { return Param(name: "form", type: "string", optional: false) }
        var word = item
        var optional = false
        if word.hasSuffix("?") { word.removeLast(); optional = true }
        guard let first = word.first, first.isLetter,
              word.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
            return Param(name: "arg\(position)", type: "any", optional: optional)
        }
        let name = word.lowercased()
        if luaKeywords.contains(name) { return Param(name: name + "_", type: "any", optional: optional) }
        return Param(name: name, type: type(ofParameter: name), optional: optional || name == "opts")
    }

    /// A parameter's type, from the names the summaries use.
    static func type(ofParameter name: String) -> String {
        switch name {
        case "opts", "fields", "t": return "table"
        case "n", "seconds", "epoch": return "number"
        case "total": return "integer?"
        case "time", "a", "b": return "string|number"
        case "value", "rows", "v": return "any"
        case "id", "email", "id_or_email", "reason", "name", "key", "path", "text", "feature", "message", "label",
             "target", "vault_entry", "timestamp":
            return "string"
        default: return name.hasSuffix("_id") ? "string" : "any"
        }
    }

    /// The type a return phrase names (`timestamp`, `summary`, …), or nil.
    static func type(ofReturn phrase: String) -> String? {
        let p = phrase.lowercased()
        let table: [(String, String)] = [
            ("epoch seconds", "number"), ("timestamp", "string"), ("string", "string"), ("seconds", "number"),
            ("`", "string"), ("summary", "export.Summary"), ("bar", "progress.Bar"), ("connection", "dispatch.Connection"),
            ("an opaque handle", "vault.Secret"), ("the table", "table"), ("{", "table"), ("true", "boolean"),
            ("false", "boolean"), ("how many", "integer"), ("the stored value", "any"), ("value", "any"),
        ]
        return table.first { p.hasPrefix($0.0) }?.1
    }

    static let luaKeywords: Set<String> = ["and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto",
                                           "if", "in", "local", "nil", "not", "or", "repeat", "return", "then", "true",
                                           "until", "while"]
}
