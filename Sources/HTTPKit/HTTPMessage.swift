import Foundation

/// An HTTP header list that keeps order and compares names case-insensitively.
public struct HTTPHeaders: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    public private(set) var fields: [(name: String, value: String)]

    public init(_ fields: [(String, String)] = []) {
        self.fields = fields.map { (name: $0.0, value: $0.1) }
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The first value of `name`, compared case-insensitively.
    public subscript(name: String) -> String? {
        get { fields.first { HTTPHeaders.namesMatch($0.name, name) }?.value }
        set {
            fields.removeAll { HTTPHeaders.namesMatch($0.name, name) }
            if let newValue { fields.append((name: name, value: newValue)) }
        }
    }

    /// Every value of `name`, in order.
    public func values(_ name: String) -> [String] {
        fields.filter { HTTPHeaders.namesMatch($0.name, name) }.map(\.value)
    }

    /// Whether two header names are equal ignoring ASCII case (RFC 9110 §5.1: field
    /// names are tokens, so ASCII folding is the whole rule; other bytes must match
    /// exactly). A byte loop: Foundation's `caseInsensitiveCompare` was a large share of
    /// the client's time per request (docs/performance.md, "Where a request's time goes").
    public static func namesMatch(_ a: some StringProtocol, _ b: some StringProtocol) -> Bool {
        let x = a.utf8, y = b.utf8
        guard x.count == y.count else { return false }
        return x.elementsEqual(y) { p, q in p == q || (p | 0x20 == q | 0x20 && (p | 0x20) &- 0x61 < 26) }
    }

    /// `value` without leading and trailing spaces and tabs (HTTP's optional whitespace).
    public static func trimmingWhitespace(_ value: String) -> Substring {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = value.firstIndex(where: { !blank($0) }), let last = value.lastIndex(where: { !blank($0) }) else {
            return ""
        }
        return value[first...last]
    }

    public mutating func add(_ name: String, _ value: String) {
        fields.append((name: name, value: value))
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        fields.makeIterator()
    }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.count == rhs.fields.count
            && zip(lhs.fields, rhs.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }
}

/// One HTTP request as the client sends it and as the sandbox and server see it.
///
/// `target` is the request target as written on the request line: the path plus an
/// optional `?query` (percent-encoded). `path` and `queryItems` decode it.
public struct HTTPRequestMessage: Sendable, Equatable {
    public var method: String
    public var target: String
    public var headers: HTTPHeaders
    public var body: Data

    public init(method: String, target: String, headers: HTTPHeaders = [:], body: Data = Data()) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
    }

    /// The percent-decoded path, without the query (kept as is when an escape is invalid).
    /// For display: route on `pathSegments`, where an encoded `/` stays inside its segment.
    public var path: String { Self.decode(rawPath) }

    /// The path's segments, split on `/` before each is percent-decoded (so `%2F` is part
    /// of a segment, never a separator); empty segments are dropped.
    public var pathSegments: [String] {
        rawPath.split(separator: "/").map(Self.decode)
    }

    /// The path as written, up to the `?`.
    private var rawPath: Substring {
        if target.utf8.allSatisfy({ $0 < 0x80 }) {
            return target.utf8.firstIndex(of: UInt8(ascii: "?")).map { target[..<$0] } ?? target[...]
        }
        // Split on Characters: a `?` with a combining mark after it is not a separator.
        return target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
    }

    private static func decode(_ raw: Substring) -> String {
        guard raw.utf8.contains(UInt8(ascii: "%")) else { return String(raw) }   // the common case, no Foundation
        return raw.removingPercentEncoding ?? String(raw)
    }

    /// The decoded query items in order (`+` is a space); repeated names are kept.
    public var queryItems: [(name: String, value: String)] {
        guard let q = target.firstIndex(of: "?") else { return [] }
        let query = target[target.index(after: q)...]
        return query.split(separator: "&").compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ s: Substring) -> String {
                if !s.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) { return String(s) }
                let plusless = s.replacingOccurrences(of: "+", with: " ")
                return plusless.removingPercentEncoding ?? plusless
            }
            guard let name = parts.first, !name.isEmpty else { return nil }
            return (name: decode(name), value: parts.count > 1 ? decode(parts[1]) : "")
        }
    }
}

/// One HTTP response.
///
/// `dropped` marks a response that was lost on the way back (fault injection: the
/// change was committed, but the caller sees a transport failure). An HTTP server
/// closes the connection instead of writing it; an in-process transport throws.
public struct HTTPResponseMessage: Sendable, Equatable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: Data
    public var dropped: Bool

    public init(status: Int, headers: HTTPHeaders = [:], body: Data = Data(), dropped: Bool = false) {
        self.status = status
        self.headers = headers
        self.body = body
        self.dropped = dropped
    }
}
