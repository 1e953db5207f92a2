import Foundation

/// The JSON parser: strict RFC 8259 over UTF-8 bytes, read in place, handing each value
/// to a `JSONBuilder` as it goes (no tree of its own).
///
/// Strict: numbers follow the grammar (`01`, `+1`, `1.`, `.5`, `1e` are errors), strings
/// may not hold control characters, `\u` escapes must pair surrogates (a lone one is an
/// error), and nothing but whitespace may follow the document. A value nested deeper
/// than `maxDepth` containers is refused; each user passes its limit (Lua values 100,
/// the Hub client 512, the sandbox 64). Errors are `JSONSyntaxError`s naming the byte.
///
/// `parse` reads one whole document; a caller that walks a document's outer structure
/// itself (a list page) uses `skipWhitespace`, `current`, `expect`, `readElements`,
/// `string` and `value`.
public struct JSONReader {
    public let bytes: UnsafeBufferPointer<UInt8>
    /// The offset of the next byte to read.
    public var position = 0
    public let maxDepth: Int
    /// Strings with escapes are unescaped here.
    @usableFromInline var scratch: [UInt8] = []

    @inlinable
    public init(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    /// Reads `bytes` as one JSON document into `builder`.
    @inlinable
    public static func parse<B: JSONBuilder>(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int,
                                             into builder: inout B) throws -> B.Value {
        var reader = JSONReader(bytes, maxDepth: maxDepth)
        reader.skipWhitespace()
        let value = try reader.value(into: &builder)
        try reader.finish()
        return value
    }

    /// Reads `data` as one JSON document into `builder`.
    @inlinable
    public static func parse<B: JSONBuilder>(_ data: Data, maxDepth: Int, into builder: inout B) throws -> B.Value {
        try data.withUnsafeBytes { raw in
            try parse(raw.bindMemory(to: UInt8.self), maxDepth: maxDepth, into: &builder)
        }
    }

    // MARK: Walking a document

    /// The byte at `position`, or nil at the end.
    @inlinable public var current: UInt8? { position < bytes.count ? bytes[position] : nil }

    /// A syntax error at `position`.
    @inlinable
    public func error(_ message: String) -> JSONSyntaxError { JSONSyntaxError(message, offset: position) }

    @inlinable @inline(__always)
    public mutating func skipWhitespace() {
        while position < bytes.count {
            let b = bytes[position]
            guard b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 else { return }
            position += 1
        }
    }

    /// Moves past `byte`, or throws `message`.
    @inlinable
    public mutating func expect(_ byte: UInt8, _ message: @autoclosure () -> String) throws {
        guard position < bytes.count, bytes[position] == byte else { throw error(message()) }
        position += 1
    }

    /// Reads the container whose opening bracket is at `position`, up to and past its
    /// `close`: `element` reads each element (the reader at its first byte); this reads
    /// the whitespace and commas between them. `container` names it in errors
    /// ("an array", "an object").
    @inlinable
    public mutating func readElements(closing close: UInt8, of container: String,
                                      _ element: (inout JSONReader) throws -> Void) throws {
        position += 1
        skipWhitespace()
        if position < bytes.count, bytes[position] == close { position += 1; return }
        while true {
            skipWhitespace()
            try element(&self)
            skipWhitespace()
            guard position < bytes.count else { throw error("unexpected end of input in \(container)") }
            if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
            if bytes[position] == close { position += 1; return }
            throw error("expected ',' or '\(Character(Unicode.Scalar(close)))'")
        }
    }

    /// Throws unless only whitespace is left.
    @inlinable
    public mutating func finish() throws {
        skipWhitespace()
        guard position == bytes.count else { throw error("unexpected data after the JSON value") }
    }

    /// Reads the value at `position` (nested `depth` containers deep) into `builder`.
    @inlinable
    public mutating func value<B: JSONBuilder>(into builder: inout B, depth: Int = 0) throws -> B.Value {
        do {
            return try readValue(into: &builder, depth: depth)
        } catch let refused as JSONValueError {
            throw error(refused.message)
        }
    }

    /// Reads the string at `position` (which must be `"`) and hands it to `body`.
    @inlinable
    public mutating func string<R>(_ body: (JSONString) throws -> R) throws -> R {
        do {
            return try readString(body)
        } catch let refused as JSONValueError {
            throw error(refused.message)
        }
    }

    // MARK: The grammar

    @inlinable
    mutating func readValue<B: JSONBuilder>(into builder: inout B, depth: Int) throws -> B.Value {
        guard depth < maxDepth else { throw error("nesting deeper than \(maxDepth) levels") }
        guard position < bytes.count else { throw error("unexpected end of input") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try readObject(into: &builder, depth: depth)
        case UInt8(ascii: "["): return try readArray(into: &builder, depth: depth)
        case UInt8(ascii: "\""): return try readString { try builder.string($0) }
        case UInt8(ascii: "t"): try literal("true"); return try builder.bool(true)
        case UInt8(ascii: "f"): try literal("false"); return try builder.bool(false)
        case UInt8(ascii: "n"): try literal("null"); return try builder.null()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try readNumber(into: &builder)
        default: throw error("unexpected character '\(Character(Unicode.Scalar(bytes[position])))'")
        }
    }

    @inlinable
    mutating func literal(_ word: StaticString) throws {
        let text = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        for b in text {
            guard position < bytes.count, bytes[position] == b else { throw error("expected '\(word)'") }
            position += 1
        }
    }

    @inlinable
    mutating func readObject<B: JSONBuilder>(into builder: inout B, depth: Int) throws -> B.Value {
        var object = try builder.beginObject()
        try readElements(closing: UInt8(ascii: "}"), of: "an object") { reader in
            guard reader.current == UInt8(ascii: "\"") else { throw reader.error("expected a string key") }
            let key = try reader.readString { try builder.key($0, in: &object) }
            reader.skipWhitespace()
            try reader.expect(UInt8(ascii: ":"), "expected ':'")
            reader.skipWhitespace()
            try builder.member(key, try reader.readValue(into: &builder, depth: depth + 1), in: &object)
        }
        return try builder.endObject(object)
    }

    @inlinable
    mutating func readArray<B: JSONBuilder>(into builder: inout B, depth: Int) throws -> B.Value {
        var array = try builder.beginArray()
        try readElements(closing: UInt8(ascii: "]"), of: "an array") { reader in
            try builder.willReadElement(in: &array)
            try builder.element(try reader.readValue(into: &builder, depth: depth + 1), in: &array)
        }
        return try builder.endArray(array)
    }

    @inlinable
    mutating func digits() -> Int {
        let from = position
        while position < bytes.count, bytes[position] >= UInt8(ascii: "0"), bytes[position] <= UInt8(ascii: "9") {
            position += 1
        }
        return position - from
    }

    @inlinable
    mutating func readNumber<B: JSONBuilder>(into builder: inout B) throws -> B.Value {
        let start = position
        func text(_ reader: JSONReader) -> String {
            String(decoding: UnsafeBufferPointer(rebasing: reader.bytes[start..<reader.position]), as: UTF8.self)
        }
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        let leadingZero = position < bytes.count && bytes[position] == UInt8(ascii: "0")
        let intDigits = digits()
        guard intDigits > 0, !(leadingZero && intDigits > 1) else { throw error("bad number '\(text(self))'") }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            position += 1
            guard digits() > 0 else { throw error("bad number '\(text(self))'") }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                position += 1
            }
            guard digits() > 0 else { throw error("bad number '\(text(self))'") }
        }
        return try builder.number(JSONNumber(UnsafeBufferPointer(rebasing: bytes[start..<position])))
    }

    /// Reads a string (at its opening quote) and hands it to `body` once `position` is
    /// past the closing quote. A string without escapes is handed over in place.
    @inlinable
    mutating func readString<R>(_ body: (JSONString) throws -> R) throws -> R {
        position += 1
        var end = position
        while end < bytes.count {
            let b = bytes[end]
            if b == UInt8(ascii: "\"") {
                let contents = UnsafeBufferPointer(rebasing: bytes[position..<end])
                position = end + 1
                return try body(JSONString(bytes: contents, hadEscapes: false))
            }
            if b == UInt8(ascii: "\\") || b < 0x20 { break }
            end += 1
        }
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[position..<end]))
        position = end
        while position < bytes.count {
            let b = bytes[position]
            if b == UInt8(ascii: "\"") {
                position += 1
                return try scratch.withUnsafeBufferPointer { try body(JSONString(bytes: $0, hadEscapes: true)) }
            }
            if b < 0x20 { throw error("control character in a string") }
            if b != UInt8(ascii: "\\") { scratch.append(b); position += 1; continue }
            position += 1
            guard position < bytes.count else { break }
            let e = bytes[position]
            position += 1
            switch e {
            case UInt8(ascii: "\""): scratch.append(0x22)
            case UInt8(ascii: "\\"): scratch.append(0x5C)
            case UInt8(ascii: "/"): scratch.append(0x2F)
            case UInt8(ascii: "b"): scratch.append(0x08)
            case UInt8(ascii: "f"): scratch.append(0x0C)
            case UInt8(ascii: "n"): scratch.append(0x0A)
            case UInt8(ascii: "r"): scratch.append(0x0D)
            case UInt8(ascii: "t"): scratch.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800..<0xDC00).contains(scalar) {
                    guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u")
                    else { throw error("unpaired surrogate") }
                    position += 2
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw error("unpaired surrogate") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                // Four hex digits always make a scalar except a low surrogate without its high half.
                guard let u = Unicode.Scalar(scalar) else { throw error("unpaired surrogate") }
                UTF8.encode(u) { scratch.append($0) }
            default: throw error("bad escape")
            }
        }
        throw error("unterminated string")
    }

    @inlinable
    mutating func hex4() throws -> UInt32 {
        guard position + 4 <= bytes.count else { throw error("bad \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[position]
            let d: UInt32
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(b - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(b - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(b - UInt8(ascii: "A") + 10)
            default: throw error("bad \\u escape")
            }
            v = v * 16 + d
            position += 1
        }
        return v
    }
}
