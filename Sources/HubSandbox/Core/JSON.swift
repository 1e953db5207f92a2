import Foundation

/// A JSON value with ordered object keys, so responses are byte-stable.
enum JSON: Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSON])
    case object([(String, JSON)])
    /// JSON text this module's writer already produced, emitted verbatim (lists render
    /// their rows straight into bytes). Opaque: subscripts and accessors see nothing in it.
    case raw([UInt8])

    static func == (lhs: JSON, rhs: JSON) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.int(a), .int(b)): return a == b
        case let (.double(a), .double(b)): return a == b
        case let (.string(a), .string(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.object(a), .object(b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        case let (.raw(a), .raw(b)): return a == b
        default: return false
        }
    }

    /// The member `key` of an object, or nil.
    subscript(key: String) -> JSON? {
        if case .object(let pairs) = self { return pairs.first { $0.0 == key }?.1 }
        return nil
    }

    var stringValue: String? { if case .string(let s) = self { return s }; return nil }
    var boolValue: Bool? { if case .bool(let b) = self { return b }; return nil }
    var isNull: Bool { self == .null }
    var objectKeys: [String] { if case .object(let p) = self { return p.map(\.0) }; return [] }

    /// `.string(s)` or `.null` when `s` is nil.
    static func str(_ s: String?) -> JSON { s.map(JSON.string) ?? .null }
    /// An RFC 3339 UTC timestamp, or `.null`.
    static func time(_ t: Int?) -> JSON { t.map { .string(Time.format($0)) } ?? .null }
}

/// Parses JSON text. Throws `JSONParseError` on malformed input or trailing bytes.
struct JSONParser {
    private let bytes: [UInt8]
    private var i = 0
    private var depth = 0

    static func parse(_ data: Data) throws -> JSON {
        var p = JSONParser(bytes: [UInt8](data))
        p.skipWS()
        let v = try p.value()
        p.skipWS()
        guard p.i == p.bytes.count else { throw JSONParseError(offset: p.i) }
        return v
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private mutating func skipWS() {
        while i < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[i]) { i += 1 }
    }

    private mutating func value() throws -> JSON {
        guard i < bytes.count else { throw JSONParseError(offset: i) }
        switch bytes[i] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        default: return try number()
        }
    }

    private mutating func literal(_ word: String) throws {
        let w = Array(word.utf8)
        guard i + w.count <= bytes.count, Array(bytes[i..<i + w.count]) == w else { throw JSONParseError(offset: i) }
        i += w.count
    }

    private mutating func object() throws -> JSON {
        depth += 1
        guard depth < 64 else { throw JSONParseError(offset: i) }
        defer { depth -= 1 }
        i += 1
        var pairs: [(String, JSON)] = []
        skipWS()
        if i < bytes.count, bytes[i] == UInt8(ascii: "}") { i += 1; return .object(pairs) }
        while true {
            skipWS()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw JSONParseError(offset: i) }
            let key = try string()
            skipWS()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw JSONParseError(offset: i) }
            i += 1
            skipWS()
            let v = try value()
            if let idx = pairs.firstIndex(where: { $0.0 == key }) { pairs[idx].1 = v } else { pairs.append((key, v)) }
            skipWS()
            guard i < bytes.count else { throw JSONParseError(offset: i) }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "}") { i += 1; return .object(pairs) }
            throw JSONParseError(offset: i)
        }
    }

    private mutating func array() throws -> JSON {
        depth += 1
        guard depth < 64 else { throw JSONParseError(offset: i) }
        defer { depth -= 1 }
        i += 1
        var items: [JSON] = []
        skipWS()
        if i < bytes.count, bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
        while true {
            skipWS()
            items.append(try value())
            skipWS()
            guard i < bytes.count else { throw JSONParseError(offset: i) }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
            throw JSONParseError(offset: i)
        }
    }

    private mutating func hex4() throws -> UInt32 {
        guard i + 4 <= bytes.count, let v = UInt32(String(decoding: bytes[i..<i + 4], as: UTF8.self), radix: 16) else {
            throw JSONParseError(offset: i)
        }
        i += 4
        return v
    }

    private mutating func string() throws -> String {
        i += 1
        var out = [UInt8]()
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "\"") { i += 1; return String(decoding: out, as: UTF8.self) }
            if b < 0x20 { throw JSONParseError(offset: i) }
            if b != UInt8(ascii: "\\") { out.append(b); i += 1; continue }
            i += 1
            guard i < bytes.count else { break }
            let e = bytes[i]; i += 1
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800..<0xDC00).contains(scalar), i + 1 < bytes.count,
                   bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") {
                    i += 2
                    let low = try hex4()
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low &- 0xDC00)
                }
                let u = Unicode.Scalar(scalar) ?? "\u{FFFD}"
                out.append(contentsOf: Array(String(Character(u)).utf8))
            default: throw JSONParseError(offset: i)
            }
        }
        throw JSONParseError(offset: i)
    }

    private var current: UInt8? { i < bytes.count ? bytes[i] : nil }

    /// Moves past a run of ASCII digits; returns how many.
    private mutating func skipDigits() -> Int {
        let start = i
        while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1 }
        return i - start
    }

    /// A number as RFC 8259 §6 spells it: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    /// So `01`, `+1`, `1.`, `.5` and `1e` are syntax errors, not numbers.
    private mutating func number() throws -> JSON {
        let start = i
        if current == UInt8(ascii: "-") { i += 1 }
        if current == UInt8(ascii: "0") {
            i += 1
        } else {
            guard skipDigits() > 0 else { throw JSONParseError(offset: i) }
        }
        if current == UInt8(ascii: ".") {
            i += 1
            guard skipDigits() > 0 else { throw JSONParseError(offset: i) }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            i += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { i += 1 }
            guard skipDigits() > 0 else { throw JSONParseError(offset: i) }
        }
        let text = String(decoding: bytes[start..<i], as: UTF8.self)
        if let n = Int(text) { return .int(n) }
        if let d = Double(text) { return .double(d) }
        throw JSONParseError(offset: start)
    }
}

struct JSONParseError: Error { let offset: Int }
