import Foundation
import HTTPKit

/// Per-request reads of header fields and the request target without Foundation string
/// machinery. Each returns exactly what the HTTPKit or Foundation call it replaces
/// returns; input where ASCII rules could give another answer (a non-ASCII header name
/// or value, a `%` escape, a `+` in a query) takes that original call instead.
enum ASCII {
    /// Whether `a` equals the ASCII literal `b` ignoring ASCII case; nil when `a` is not
    /// ASCII (then only Foundation's Unicode-aware comparison can tell).
    static func equalIgnoringCase(_ a: some StringProtocol, _ b: String) -> Bool? {
        let x = a.utf8, y = b.utf8
        if x.count == y.count {
            var same = true
            for (p, q) in zip(x, y) where p != q {
                if p >= 0x80 { return nil }
                if lower(p) != lower(q) { same = false; break }
            }
            if same { return true }
        }
        return x.allSatisfy { $0 < 0x80 } ? false : nil
    }

    /// `s.trimmingCharacters(in: .whitespaces)`: for ASCII text that set is space and tab.
    static func trimmingWhitespace(_ s: Substring) -> String {
        guard s.utf8.allSatisfy({ $0 < 0x80 }) else { return s.trimmingCharacters(in: .whitespaces) }
        var u = s.utf8[...]
        while let f = u.first, f == 0x20 || f == 0x09 { u = u.dropFirst() }
        while let l = u.last, l == 0x20 || l == 0x09 { u = u.dropLast() }
        return String(Substring(u))
    }

    private static func lower(_ c: UInt8) -> UInt8 { c >= 0x41 && c <= 0x5A ? c | 0x20 : c }
}

extension HTTPHeaders {
    /// The first value of `name` (an ASCII literal): the same answer as `self[name]`.
    func field(_ name: String) -> String? {
        for f in fields {
            switch ASCII.equalIgnoringCase(f.name, name) {
            case .some(true): return f.value
            case .some(false): continue
            case nil: if f.name.caseInsensitiveCompare(name) == .orderedSame { return f.value }
            }
        }
        return nil
    }
}

extension HTTPRequestMessage {
    /// The same as `path`: the percent-decoded path without the query.
    var decodedPath: String {
        guard target.utf8.allSatisfy({ $0 < 0x80 }) else { return path }
        let raw = target.utf8.firstIndex(of: UInt8(ascii: "?")).map { target[..<$0] } ?? target[...]
        if !raw.utf8.contains(UInt8(ascii: "%")) { return String(raw) }
        return path
    }

    /// The same as `queryItems`: decoded name/value pairs in order, repeats kept.
    var decodedQueryItems: [(name: String, value: String)] {
        guard target.utf8.allSatisfy({ $0 < 0x80 }) else { return queryItems }
        guard let q = target.utf8.firstIndex(of: UInt8(ascii: "?")) else { return [] }
        let query = target[target.index(after: q)...]
        return query.split(separator: "&").compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = parts.first, !name.isEmpty else { return nil }
            return (name: HTTPRequestMessage.decode(name), value: parts.count > 1 ? HTTPRequestMessage.decode(parts[1]) : "")
        }
    }

    /// `+` → space, then percent-decoding (kept as is when the escapes are invalid).
    private static func decode(_ s: Substring) -> String {
        if !s.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) { return String(s) }
        let plusless = s.replacingOccurrences(of: "+", with: " ")
        return plusless.removingPercentEncoding ?? plusless
    }
}
