import Foundation
import ScriptHost

/// Argument helpers shared by the `hub` bindings. Each one checks its value against
/// `HubArgumentLimits` before returning it, so no binding does any work on an oversize
/// value; errors read `bad argument #1 to 'hub.users.get' (id is 2097152 bytes; the most is 255)`.
extension BindingCall {
    /// Argument n as an id (`usr_…`, `ent_…`) for a path segment: at most
    /// `HubArgumentLimits.id` bytes, not empty, not `.` or `..`, without `/` or `?`.
    func id(_ n: Int) throws -> String {
        try checkedID(try string(n), n, what: "id")
    }

    /// Argument n as an id or, when it holds `@`, an email; both at most `HubArgumentLimits.id` bytes.
    func idOrEmail(_ n: Int) throws -> (value: String, isEmail: Bool) {
        let s = try string(n)
        let isEmail = s.utf8.contains(UInt8(ascii: "@"))
        if isEmail {
            try checkLength(s, n, "email", max: HubArgumentLimits.id)
            try checkNoControls(s, n, "an email")
            return (s, true)
        }
        return (try checkedID(s, n, what: "id"), false)
    }

    /// Argument n as a string of at most `max` bytes, called `what` in errors (`reason`).
    func text(_ n: Int, _ what: String, max: Int) throws -> String {
        let s = try string(n)
        try checkLength(s, n, what, max: max)
        return s
    }

    /// Argument n as a table of named fields to send (absent: empty), checked against
    /// `HubArgumentLimits.tableProblem`.
    func fields(_ n: Int) throws -> [String: ScriptValue] {
        let f = try namedFields(n)
        if let problem = HubArgumentLimits.tableProblem(.object(f)) { throw argumentError(n, problem) }
        return f
    }

    /// The string field `name` of `fields` (argument n): at most `max` bytes; nil when absent.
    func field(_ fields: [String: ScriptValue], _ name: String, at n: Int, max: Int) throws -> String? {
        guard let s = fields[name]?.stringValue else { return nil }
        if s.utf8.count > max { throw argumentError(n, HubArgumentLimits.tooLong("field '\(name)'", s.utf8.count, max: max)) }
        return s
    }

    /// The `key` option of the options table at n (the recipe's own idempotency key).
    func key(_ n: Int) throws -> String? {
        let opts = try fields(n)
        guard let key = opts["key"] else { return nil }
        let max = HubArgumentLimits.key
        if let s = key.stringValue, s.utf8.count > max { throw argumentError(n, HubArgumentLimits.tooLong("key", s.utf8.count, max: max)) }
        guard let s = key.stringValue, !s.isEmpty else {
            throw argumentError(n, "key must be a string of 1 to \(max) characters")
        }
        return s
    }

    /// Filters as query items; lists repeat the name (`action = {"a", "b"}`), booleans
    /// are `true`/`false`. Unknown filters are refused (a typo would silently widen a
    /// query); each value is at most `HubArgumentLimits.filterValue` bytes and a list has
    /// at most `filterValues` items.
    func query(_ n: Int, allowed: [String]) throws -> [(name: String, value: String)] {
        var items: [(name: String, value: String)] = []
        func add(_ name: String, _ value: String) throws {
            let max = HubArgumentLimits.filterValue
            if value.utf8.count > max { throw argumentError(n, HubArgumentLimits.tooLong("filter '\(name)'", value.utf8.count, max: max)) }
            items.append((name, value))
        }
        for (name, value) in try namedFields(n).sorted(by: { $0.key < $1.key }) {
            guard allowed.contains(name) else {
                throw argumentError(n, "unknown filter \(HubArgumentLimits.shown(name)) (filters: \(allowed.joined(separator: ", ")))")
            }
            switch value {
            case .string(let s): try add(name, s)
            case .integer(let i): try add(name, String(i))
            case .bool(let b): try add(name, b ? "true" : "false")
            case .array(let list):
                guard list.count <= HubArgumentLimits.filterValues else {
                    throw argumentError(n, "filter '\(name)' lists \(list.count) values; the most is \(HubArgumentLimits.filterValues)")
                }
                for item in list {
                    guard let s = item.stringValue else { throw argumentError(n, "filter '\(name)' must be a list of strings") }
                    try add(name, s)
                }
            default: throw argumentError(n, "filter '\(name)' must be a string, number, boolean or list")
            }
        }
        return items
    }

    /// Argument n as a table of named fields (absent: empty), unchecked.
    private func namedFields(_ n: Int) throws -> [String: ScriptValue] {
        guard case .object(let f) = try optionalTable(n) else {
            if case .array(let a) = try optionalTable(n), a.isEmpty { return [:] }
            throw argumentError(n, "table of named fields expected")
        }
        return f
    }

    private func checkLength(_ s: String, _ n: Int, _ what: String, max: Int) throws {
        if s.utf8.count > max { throw argumentError(n, HubArgumentLimits.tooLong(what, s.utf8.count, max: max)) }
    }

    private func checkedID(_ s: String, _ n: Int, what: String) throws -> String {
        try checkLength(s, n, what, max: HubArgumentLimits.id)
        guard !s.isEmpty, !s.utf8.contains(UInt8(ascii: "/")), !s.utf8.contains(UInt8(ascii: "?")) else {
            throw argumentError(n, "an id such as usr_… expected, got '\(s)'")
        }
        guard s != ".", s != ".." else {
            throw argumentError(n, "an id such as usr_… expected, got '\(s)' ('.' and '..' are not ids)")
        }
        try checkNoControls(s, n, "an id")
        return s
    }

    /// Refuses control characters (NUL included): a server that reads ids as C strings
    /// would act on another resource than the one the path, the journal and the plan name.
    private func checkNoControls(_ s: String, _ n: Int, _ what: String) throws {
        if let offset = s.utf8.firstIndex(where: { $0 < 0x20 || $0 == 0x7F }) {
            let byte = s.utf8[offset]
            let position = s.utf8.distance(from: s.utf8.startIndex, to: offset) + 1
            throw argumentError(n, "\(what) cannot contain control characters (byte \(position) is 0x\(String(byte, radix: 16, uppercase: true).leftPadded(2)))")
        }
    }
}

private extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: "0", count: Swift.max(0, width - count)) + self }
}

/// Percent-encodes a path segment (ids are plain, but emails and role slugs may not be):
/// letters, digits and `-._~@` are kept, everything else is encoded. An all-ASCII
/// string (every id) takes a byte loop; others go through Foundation, which also keeps
/// non-ASCII letters and digits.
func segment(_ s: String) -> String {
    guard s.utf8.allSatisfy({ $0 < 0x80 }) else {
        return s.addingPercentEncoding(withAllowedCharacters: segmentAllowed) ?? s
    }
    if s.utf8.allSatisfy({ segmentKeeps[Int($0)] }) { return s }
    var out = [UInt8]()
    let hex = Array("0123456789ABCDEF".utf8)
    for byte in s.utf8 {
        if segmentKeeps[Int(byte)] { out.append(byte) } else { out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]] }
    }
    return String(decoding: out, as: UTF8.self)
}

private let segmentAllowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~@"))
private let segmentKeeps: [Bool] = (0..<128).map { byte in
    let b = UInt8(byte)
    return (b >= 0x30 && b <= 0x39) || (b | 0x20 >= 0x61 && b | 0x20 <= 0x7A) || "-._~@".utf8.contains(b)
}
