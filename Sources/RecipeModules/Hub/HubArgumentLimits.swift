import ScriptHost

/// The most a recipe may pass to a `hub` binding. Each value is checked as soon as the
/// binding has read it, before any other work (percent-encoding, hashing, journalling,
/// sending): a bigger value could never be valid at the Hub and would only cost time and
/// journal space. The figures follow the Hub's field limits (docs/hub-api.md, "Client
/// rules": strings 255 by default, free text and `reason` 2,000, `custom`/`overrides`
/// 16 KB, a body 1 MB). docs/recipe-sandbox.md lists them.
public enum HubArgumentLimits {
    /// An id or an email in a path or a lookup (`usr_…`, role and application ids; an
    /// email address has at most 254 bytes).
    public static let id = 255
    /// One filter value of a list binding (each item of a list filter).
    public static let filterValue = 255
    /// Values in one list filter (`action = {…}`).
    public static let filterValues = 100
    /// The recipe's own idempotency key (`{ key = … }`).
    public static let key = 255
    /// `reason` of `hub.users.suspend`: the Hub's limit for free text.
    public static let reason = 2_000
    /// The reason of `hub.entitlements.disable`/`revoke`, sent as `disabled_reason`.
    public static let entitlementReason = 255
    /// An API key's or a role's name (the Hub's limit for key names is 100 characters).
    public static let keyName = 400
    /// A field name in a table a binding sends (body fields, options).
    public static let fieldName = 255
    /// A string anywhere in a table a binding sends (the Hub's largest stated field,
    /// `custom`/`overrides`, is 16 KB).
    public static let fieldString = 16 << 10
    /// A whole request body as JSON (the Hub's limit is 1 MB).
    public static let body = 1 << 20

    /// `id is 2097152 bytes; the most is 255`.
    static func tooLong(_ what: String, _ bytes: Int, max: Int) -> String {
        "\(what) is \(bytes) bytes; the most is \(max)"
    }

    /// A name or value quoted for a message, cut to 40 characters.
    static func shown(_ text: String) -> String {
        let head = text.utf8.count > 40 ? String(decoding: text.utf8.prefix(40), as: UTF8.self) + "…" : text
        return "'" + head + "'"
    }

    /// Why `value`, a table a binding sends, is too big, or nil. Checks every field name
    /// (`fieldName`), every string (`fieldString`, named by its path `custom.note`) and
    /// the JSON size (`body`, counted from below and stopped as soon as it is over).
    static func tableProblem(_ value: ScriptValue) -> String? {
        var size = 0
        return problem(value, path: "", size: &size)
    }

    private static func problem(_ value: ScriptValue, path: String, size: inout Int) -> String? {
        switch value {
        case .string(let s):
            let n = s.utf8.count
            if n > fieldString { return tooLong("field '\(path)'", n, max: fieldString) }
            size += n + 2
        case .bytes(let b):
            if b.count > fieldString { return tooLong("field '\(path)'", b.count, max: fieldString) }
            size += b.count + 2
        case .integer(let i): size += String(i).utf8.count
        case .number: size += 3
        case .bool, .null, .nilValue, .function: size += 4
        case .handle(let h): return "field '\(path)' is \(h), an opaque handle: it has no value to send"
        case .array(let items):
            size += 1 + items.count
            for (i, item) in items.enumerated() {
                if let p = problem(item, path: path + "[\(i + 1)]", size: &size) { return p }
                if size > body { break }
            }
        case .object(let fields):
            size += 1 + fields.count
            for (name, item) in fields {
                let n = name.utf8.count
                if n > fieldName { return tooLong("a field name", n, max: fieldName) }
                size += n + 3
                if let p = problem(item, path: path.isEmpty ? name : path + "." + name, size: &size) { return p }
                if size > body { break }
            }
        }
        if size > body { return "the table makes a request body of more than \(body) bytes of JSON; the most is \(body)" }
        return nil
    }
}
