import Foundation

/// A malformed JSON document: what was expected and at which byte.
public struct HubJSONSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public var offset: Int
    public var description: String { "invalid JSON at byte \(offset): \(message)" }
}

/// A strict RFC 8259 parser straight into `HubJSON` (Foundation's decoders are an order
/// of magnitude slower for untyped values). Nesting deeper than 512 levels is refused.
struct HubJSONParser {
    private let bytes: [UInt8]
    private var index = 0
    private static let maxDepth = 512

    static func parse(_ data: Data) throws -> HubJSON {
        var parser = HubJSONParser(bytes: [UInt8](data))
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else { throw parser.error("trailing characters") }
        return value
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private func error(_ message: String) -> HubJSONSyntaxError { HubJSONSyntaxError(message: message, offset: index) }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let c = current, c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 { index += 1 }
    }

    private mutating func expect(_ literal: String, _ value: HubJSON) throws -> HubJSON {
        for byte in literal.utf8 {
            guard current == byte else { throw error("expected \(literal)") }
            index += 1
        }
        return value
    }

    private mutating func parseValue(depth: Int) throws -> HubJSON {
        guard depth < Self.maxDepth else { throw error("nesting too deep") }
        switch current {
        case UInt8(ascii: "{"): return try parseObject(depth: depth)
        case UInt8(ascii: "["): return try parseArray(depth: depth)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try expect("true", .bool(true))
        case UInt8(ascii: "f"): return try expect("false", .bool(false))
        case UInt8(ascii: "n"): return try expect("null", .null)
        case let c? where c == UInt8(ascii: "-") || (c >= 0x30 && c <= 0x39): return try parseNumber()
        default: throw error("expected a value")
        }
    }

    private mutating func parseObject(depth: Int) throws -> HubJSON {
        index += 1
        var members: [String: HubJSON] = [:]
        skipWhitespace()
        if current == UInt8(ascii: "}") { index += 1; return .object(members) }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw error("expected a member name") }
            let key = try parseString()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            skipWhitespace()
            members[key] = try parseValue(depth: depth + 1)
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"): index += 1; return .object(members)
            default: throw error("expected ',' or '}'")
            }
        }
    }

    private mutating func parseArray(depth: Int) throws -> HubJSON {
        index += 1
        var items: [HubJSON] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") { index += 1; return .array(items) }
        while true {
            skipWhitespace()
            items.append(try parseValue(depth: depth + 1))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): index += 1; return .array(items)
            default: throw error("expected ',' or ']'")
            }
        }
    }

    private mutating func parseNumber() throws -> HubJSON {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, first >= 0x30 && first <= 0x39 else { throw error("expected a digit") }
        if first == 0x30 { index += 1 } else { skipDigits() }
        if current == UInt8(ascii: ".") {
            index += 1
            guard skipDigits() > 0 else { throw error("expected a digit after '.'") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard skipDigits() > 0 else { throw error("expected an exponent") }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let value = Double(text) else { throw error("bad number") }
        return .number(value)
    }

    @discardableResult
    private mutating func skipDigits() -> Int {
        let start = index
        while let c = current, c >= 0x30 && c <= 0x39 { index += 1 }
        return index - start
    }

    private mutating func parseString() throws -> String {
        index += 1
        // Fast path: a string with no escape is one slice of the input.
        var end = index
        while end < bytes.count {
            let c = bytes[end]
            if c == UInt8(ascii: "\"") {
                let s = String(decoding: bytes[index..<end], as: UTF8.self)
                index = end + 1
                return s
            }
            if c == UInt8(ascii: "\\") || c < 0x20 { break }
            end += 1
        }
        var scalars = String.UnicodeScalarView()
        var runStart = index
        func flushRun(_ parser: HubJSONParser, _ end: Int) {
            if end > runStart { scalars.append(contentsOf: String(decoding: parser.bytes[runStart..<end], as: UTF8.self).unicodeScalars) }
        }
        while true {
            guard let c = current else { throw error("unterminated string") }
            switch c {
            case UInt8(ascii: "\""):
                flushRun(self, index)
                index += 1
                return String(scalars)
            case UInt8(ascii: "\\"):
                flushRun(self, index)
                index += 1
                scalars.append(try parseEscape())
                runStart = index
            case 0..<0x20:
                throw error("control character in string")
            default:
                index += 1
            }
        }
    }

    private mutating func parseEscape() throws -> Unicode.Scalar {
        guard let c = current else { throw error("unterminated escape") }
        index += 1
        switch c {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let high = try parseHex4()
            if (0xD800..<0xDC00).contains(high) {
                guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                    throw error("lone surrogate")
                }
                index += 2
                let low = try parseHex4()
                guard (0xDC00..<0xE000).contains(low) else { throw error("bad surrogate pair") }
                return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))!
            }
            guard let scalar = Unicode.Scalar(high) else { throw error("lone surrogate") }
            return scalar
        default:
            throw error("bad escape")
        }
    }

    private mutating func parseHex4() throws -> UInt32 {
        guard index + 4 <= bytes.count, let value = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16) else {
            throw error("expected 4 hex digits")
        }
        index += 4
        return value
    }
}

/// The canonical writer: sorted keys, no whitespace, `/` unescaped, integral numbers
/// without a fraction, non-ASCII kept as UTF-8. Writes bytes, copying runs of
/// characters that need no escape in one go (exports stream pages through it).
enum HubJSONWriter {
    static func write(_ value: HubJSON) -> Data {
        var out = [UInt8]()
        out.reserveCapacity(512)
        write(value, into: &out)
        return Data(out)
    }

    private static func write(_ value: HubJSON, into out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .number(let n):
            if n.rounded() == n, abs(n) < 9.0e15 {
                out.append(contentsOf: String(Int64(n)).utf8)
            } else if n.isFinite {
                out.append(contentsOf: "\(n)".utf8)
            } else {
                out.append(contentsOf: "null".utf8)
            }
        case .string(let s): writeString(s, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                write(item, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, key) in members.keys.sorted().enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                writeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                write(members[key]!, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Appends `s` as a JSON string (quoted; `"`, `\\` and control characters escaped,
    /// everything else as UTF-8), copying runs that need no escaping in one go: the
    /// same bytes as ScriptHost's `JSONCodec.writeString`, which this module cannot see.
    private static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { bytes in
            var runStart = 0
            for (i, b) in bytes.enumerated() where b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i]))
                switch b {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), b])
                case 0x0A: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
                case 0x0D: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
                case 0x09: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
                default:
                    out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                            hexDigits[Int(b >> 4)], hexDigits[Int(b & 0xF)]])
                }
                runStart = i + 1
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        }
        out.append(UInt8(ascii: "\""))
    }
}
