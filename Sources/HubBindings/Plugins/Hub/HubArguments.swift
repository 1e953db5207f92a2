import Foundation
import ScriptHost

/// Argument helpers shared by the `hub` bindings.
extension BindingCall {
    /// Argument n as an id (`usr_…`, `ent_…`): a non-empty string without `/`.
    func id(_ n: Int) throws -> String {
        let s = try string(n)
        guard !s.isEmpty, !s.contains("/"), !s.contains("?") else {
            throw argumentError(n, "an id such as usr_… expected, got '\(s)'")
        }
        return s
    }

    /// Argument n as a table of named fields (absent: empty).
    func fields(_ n: Int) throws -> [String: ScriptValue] {
        guard case .object(let f) = try optionalTable(n) else {
            if case .array(let a) = try optionalTable(n), a.isEmpty { return [:] }
            throw argumentError(n, "table of named fields expected")
        }
        return f
    }

    /// The `key` option of the options table at n (the recipe's own idempotency key).
    func key(_ n: Int) throws -> String? {
        let opts = try fields(n)
        guard let key = opts["key"] else { return nil }
        guard let s = key.stringValue, !s.isEmpty, s.utf8.count <= 255 else {
            throw argumentError(n, "key must be a string of 1 to 255 characters")
        }
        return s
    }

    /// Filters as query items; lists repeat the name (`action = {"a", "b"}`), booleans
    /// are `true`/`false`. Unknown filters are refused (a typo would silently widen a query).
    func query(_ n: Int, allowed: [String]) throws -> [(name: String, value: String)] {
        var items: [(name: String, value: String)] = []
        for (name, value) in try fields(n).sorted(by: { $0.key < $1.key }) {
            guard allowed.contains(name) else {
                throw argumentError(n, "unknown filter '\(name)' (filters: \(allowed.joined(separator: ", ")))")
            }
            switch value {
            case .string(let s): items.append((name, s))
            case .integer(let i): items.append((name, String(i)))
            case .bool(let b): items.append((name, b ? "true" : "false"))
            case .array(let list):
                for item in list {
                    guard let s = item.stringValue else { throw argumentError(n, "filter '\(name)' must be a list of strings") }
                    items.append((name, s))
                }
            default: throw argumentError(n, "filter '\(name)' must be a string, number, boolean or list")
            }
        }
        return items
    }
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
