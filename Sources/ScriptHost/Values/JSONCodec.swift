import Foundation

/// JSON encoding and decoding of `ScriptValue`, with the bridging rules of
/// `docs/bridging.md`: integers stay integers (`1`), floats stay floats (`1.0`),
/// object keys are written sorted (canonical form, used for body digests),
/// `.nilValue` and `.null` encode as `null`, non-UTF-8 strings, NaN, infinities and
/// functions are refused, and nesting deeper than `maxDepth` is refused.
public enum JSONCodec {
    public static let maxDepth = 100

    public struct Error: Swift.Error, CustomStringConvertible, Equatable {
        public let message: String
        public var description: String { message }
        public init(_ message: String) { self.message = message }
    }

    // MARK: Encoding

    /// Encodes `value` as compact canonical JSON.
    public static func encode(_ value: ScriptValue) throws -> String {
        String(decoding: try encodeBytes(value), as: UTF8.self)
    }

    public static func encodeData(_ value: ScriptValue) throws -> Data {
        Data(try encodeBytes(value))
    }

    /// The canonical JSON of `value` as UTF-8 bytes (the fast path: no String building).
    /// With a `budget`, the output is charged as it grows (twice its size: the buffer
    /// doubles), so a value whose JSON is far larger than the value itself (strings of
    /// control characters grow sixfold) stops at the memory cap while it is built.
    public static func encodeBytes(_ value: ScriptValue, budget: MemoryBudget? = nil) throws -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(256)
        try write(value, into: &out, depth: 0, budget: budget)
        return out
    }

    private static func write(_ value: ScriptValue, into out: inout [UInt8], depth: Int, budget: MemoryBudget?) throws {
        guard depth < maxDepth else {   // the same limit as decoding: maxDepth levels at most
            throw Error("cannot encode: nesting deeper than \(maxDepth) levels (a cycle?)")
        }
        switch value {
        case .nilValue, .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .integer(let i): out.append(contentsOf: String(i).utf8)
        case .number(let d): out.append(contentsOf: try formatDouble(d).utf8)
        case .string(let s):
            // Charged before it is written: escaping can make it six times longer.
            if let budget, s.utf8.count > 64 { try budget.charge(2 * escapedSize(s)) }
            writeString(s, into: &out)
        case .bytes: throw Error("cannot encode a string that is not valid UTF-8")
        case .function: throw Error("cannot encode a function")
        case .handle(let h): throw Error("cannot encode \(h): an opaque handle has no value to encode")
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (n, item) in items.enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                try write(item, into: &out, depth: depth + 1, budget: budget)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let fields):
            out.append(UInt8(ascii: "{"))
            for (n, key) in fields.keys.sorted().enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                writeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                try write(fields[key]!, into: &out, depth: depth + 1, budget: budget)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Shortest round-tripping form that still reads back as a float (`1.0`, `2.5e+20`).
    static func formatDouble(_ d: Double) throws -> String {
        guard d.isFinite else { throw Error("cannot encode \(d) (JSON has no NaN or infinity)") }
        var s = d.description
        if !s.contains(".") && !s.contains("e") && !s.contains("E") { s += ".0" }
        return s
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// The bytes `writeString` writes for `s`, quotes included.
    static func escapedSize(_ s: String) -> Int {
        var size = 2
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x0A, 0x0D, 0x09: size += 2
            case ..<0x20: size += 6
            default: size += 1
            }
        }
        return size
    }

    /// An upper bound of the size of `value`'s JSON, computed without building it
    /// (to decide whether to show a value at all).
    public static func estimatedSize(_ value: ScriptValue) -> Int {
        switch value {
        case .string(let s): return escapedSize(s)
        case .bytes(let b): return b.count * 6 + 2
        case .array(let items): return items.reduce(2) { $0 + estimatedSize($1) + 1 }
        case .object(let fields): return fields.reduce(2) { $0 + escapedSize($1.key) + estimatedSize($1.value) + 2 }
        default: return 32
        }
    }

    /// Appends `s` as a JSON string (quoted; `"`, `\\` and control characters escaped,
    /// everything else as UTF-8), copying runs that need no escaping in one go.
    public static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { bytes in
            var runStart = 0
            for (i, b) in bytes.enumerated() where b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i]))
                switch b {
                case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
                case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
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

    // MARK: Decoding

    /// Decodes one JSON document. Arrays become `.array`, objects `.object`, `null`
    /// becomes `.null`; numbers without a fraction or exponent become integers.
    public static func decode(_ text: String) throws -> ScriptValue {
        try decode(Data(text.utf8))
    }

    public static func decode(_ data: Data) throws -> ScriptValue {
        try data.withUnsafeBytes { try decode(bytes: $0) }
    }

    /// Decodes one JSON document from `bytes`, charging what it builds to `budget`
    /// (which throws `ScriptMemoryLimitError` when the run's memory cap is reached).
    public static func decode(bytes raw: UnsafeRawBufferPointer, budget: MemoryBudget? = nil) throws -> ScriptValue {
        var parser = Parser(bytes: raw.bindMemory(to: UInt8.self), budget: budget)
        parser.skipSpace()
        let value = try parser.parseValue(depth: 0)
        parser.skipSpace()
        guard parser.pos == parser.bytes.count else { throw parser.fail("unexpected data after the JSON value") }
        return value
    }

    private struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        let budget: MemoryBudget?
        var pos = 0

        init(bytes: UnsafeBufferPointer<UInt8>, budget: MemoryBudget?) {
            self.bytes = bytes
            self.budget = budget
        }

        func fail(_ what: String) -> Error { Error("invalid JSON at byte \(pos + 1): \(what)") }

        mutating func skipSpace() {
            while pos < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[pos]) { pos += 1 }
        }

        mutating func expect(_ literal: String, _ value: ScriptValue) throws -> ScriptValue {
            for b in literal.utf8 {
                guard pos < bytes.count, bytes[pos] == b else { throw fail("expected '\(literal)'") }
                pos += 1
            }
            return value
        }

        mutating func parseValue(depth: Int) throws -> ScriptValue {
            guard depth < JSONCodec.maxDepth else { throw fail("nesting deeper than \(JSONCodec.maxDepth) levels") }
            guard pos < bytes.count else { throw fail("unexpected end of input") }
            try budget?.charge(MemoryBudget.Cost.value)
            switch bytes[pos] {
            case UInt8(ascii: "{"): return try parseObject(depth: depth)
            case UInt8(ascii: "["): return try parseArray(depth: depth)
            case UInt8(ascii: "\""): return .string(try chargedString())
            case UInt8(ascii: "t"): return try expect("true", .bool(true))
            case UInt8(ascii: "f"): return try expect("false", .bool(false))
            case UInt8(ascii: "n"): return try expect("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
            default: throw fail("unexpected character '\(Character(Unicode.Scalar(bytes[pos])))'")
            }
        }

        mutating func parseObject(depth: Int) throws -> ScriptValue {
            pos += 1
            try budget?.charge(MemoryBudget.Cost.container)
            var fields: [String: ScriptValue] = [:]
            skipSpace()
            if pos < bytes.count, bytes[pos] == UInt8(ascii: "}") { pos += 1; return .object(fields) }
            while true {
                skipSpace()
                guard pos < bytes.count, bytes[pos] == UInt8(ascii: "\"") else { throw fail("expected a string key") }
                let key = try chargedString()
                try budget?.charge(MemoryBudget.Cost.entry)
                skipSpace()
                guard pos < bytes.count, bytes[pos] == UInt8(ascii: ":") else { throw fail("expected ':'") }
                pos += 1
                skipSpace()
                fields[key] = try parseValue(depth: depth + 1)
                skipSpace()
                guard pos < bytes.count else { throw fail("unexpected end of input in an object") }
                if bytes[pos] == UInt8(ascii: ",") { pos += 1; continue }
                if bytes[pos] == UInt8(ascii: "}") { pos += 1; return .object(fields) }
                throw fail("expected ',' or '}'")
            }
        }

        mutating func parseArray(depth: Int) throws -> ScriptValue {
            pos += 1
            try budget?.charge(MemoryBudget.Cost.container)
            var items: [ScriptValue] = []
            skipSpace()
            if pos < bytes.count, bytes[pos] == UInt8(ascii: "]") { pos += 1; return .array(items) }
            while true {
                skipSpace()
                items.append(try parseValue(depth: depth + 1))
                skipSpace()
                guard pos < bytes.count else { throw fail("unexpected end of input in an array") }
                if bytes[pos] == UInt8(ascii: ",") { pos += 1; continue }
                if bytes[pos] == UInt8(ascii: "]") { pos += 1; return .array(items) }
                throw fail("expected ',' or ']'")
            }
        }

        /// RFC 8259 numbers only: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
        /// Integers that fit Int64 stay integers; larger ones become floats; a number
        /// too large for a float is refused.
        mutating func parseNumber() throws -> ScriptValue {
            let start = pos
            func digits() -> Int {
                let from = pos
                while pos < bytes.count, bytes[pos] >= UInt8(ascii: "0"), bytes[pos] <= UInt8(ascii: "9") { pos += 1 }
                return pos - from
            }
            func text() -> String { String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<pos]), as: UTF8.self) }
            if bytes[pos] == UInt8(ascii: "-") { pos += 1 }
            let leadingZero = pos < bytes.count && bytes[pos] == UInt8(ascii: "0")
            let intDigits = digits()
            guard intDigits > 0, !(leadingZero && intDigits > 1) else { throw fail("bad number '\(text())'") }
            var isFloat = false
            if pos < bytes.count, bytes[pos] == UInt8(ascii: ".") {
                pos += 1
                isFloat = true
                guard digits() > 0 else { throw fail("bad number '\(text())'") }
            }
            if pos < bytes.count, bytes[pos] == UInt8(ascii: "e") || bytes[pos] == UInt8(ascii: "E") {
                pos += 1
                isFloat = true
                if pos < bytes.count, bytes[pos] == UInt8(ascii: "+") || bytes[pos] == UInt8(ascii: "-") { pos += 1 }
                guard digits() > 0 else { throw fail("bad number '\(text())'") }
            }
            let literal = text()
            if !isFloat, let i = Int64(literal) { return .integer(i) }
            guard let d = Double(literal), d.isFinite else { throw fail("number '\(literal)' is out of range") }
            return .number(d)
        }

        /// A string, charged to the budget when it lives on the heap (over 15 bytes).
        mutating func chargedString() throws -> String {
            let s = try parseString()
            if let budget, s.utf8.count > 15 { try budget.charge(s.utf8.count + MemoryBudget.Cost.string) }
            return s
        }

        mutating func parseString() throws -> String {
            pos += 1
            // Fast path: no escapes before the closing quote.
            var end = pos
            while end < bytes.count {
                let b = bytes[end]
                if b == UInt8(ascii: "\"") {
                    let slice = UnsafeBufferPointer(rebasing: bytes[pos..<end])
                    pos = end + 1   // errors name the byte after the string, as the slow path does
                    guard let s = String(validating: slice, as: UTF8.self) else { throw fail("string is not valid UTF-8") }
                    return s
                }
                if b == UInt8(ascii: "\\") || b < 0x20 { break }
                end += 1
            }
            var out = [UInt8]()
            while pos < bytes.count {
                let b = bytes[pos]
                if b == UInt8(ascii: "\"") {
                    pos += 1
                    guard let s = String(validating: out, as: UTF8.self) else { throw fail("string is not valid UTF-8") }
                    return s
                }
                if b < 0x20 { throw fail("control character in a string") }
                if b != UInt8(ascii: "\\") { out.append(b); pos += 1; continue }
                pos += 1
                guard pos < bytes.count else { break }
                let e = bytes[pos]
                pos += 1
                switch e {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5C)
                case UInt8(ascii: "/"): out.append(0x2F)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800..<0xDC00).contains(scalar) {
                        guard pos + 1 < bytes.count, bytes[pos] == UInt8(ascii: "\\"), bytes[pos + 1] == UInt8(ascii: "u")
                        else { throw fail("unpaired surrogate") }
                        pos += 2
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw fail("unpaired surrogate") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let u = Unicode.Scalar(scalar) else { throw fail("bad \\u escape") }
                    out.append(contentsOf: Array(String(Character(u)).utf8))
                default: throw fail("bad escape")
                }
            }
            throw fail("unterminated string")
        }

        mutating func hex4() throws -> UInt32 {
            guard pos + 4 <= bytes.count else { throw fail("bad \\u escape") }
            var v: UInt32 = 0
            for _ in 0..<4 {
                let b = bytes[pos]
                let d: UInt32
                switch b {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(b - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(b - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(b - UInt8(ascii: "A") + 10)
                default: throw fail("bad \\u escape")
                }
                v = v * 16 + d
                pos += 1
            }
            return v
        }
    }
}
