import SystemText

/// The JSON writer: compact JSON appended to a byte buffer (no whitespace, no String
/// built along the way). Its users pick the values; the text of each is decided here:
///
/// - strings escape only `"`, `\`, `\n`, `\r`, `\t` and the other C0 controls
///   (`\u00XX`, lowercase hex); `/`, DEL and all non-ASCII text are written as they are
///   (UTF-8), runs that need no escape copied in one go;
/// - integers in decimal; floats in Swift's shortest round-tripping form, always with a
///   `.` or an exponent (`1.0`, `2.5e+20`); the caller keeps NaN and infinities out;
/// - objects either in the order given, or **canonical**: keys sorted (Swift's `String`
///   order), so the same value always gives the same bytes — what request bodies,
///   their digests, `json.encode` and JSONL exports rely on.
public enum JSONWriter {
    @inlinable
    public static func writeNull(into out: inout [UInt8]) { appendASCII("null", into: &out) }

    @inlinable
    public static func writeBool(_ b: Bool, into out: inout [UInt8]) {
        if b { appendASCII("true", into: &out) } else { appendASCII("false", into: &out) }
    }

    /// Writes `i` in decimal (the same text as `String(i)`), without allocating.
    @inlinable
    public static func writeInteger(_ i: Int64, into out: inout [UInt8]) {
        if i < 0 { out.append(UInt8(ascii: "-")) }
        var v = i.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buf in
            var n = 20
            repeat { n -= 1; buf[n] = 48 + UInt8(truncatingIfNeeded: v % 10); v /= 10 } while v > 0
            out.append(contentsOf: UnsafeBufferPointer(rebasing: buf[n...]))
        }
    }

    /// Writes a finite `d` as its shortest round-tripping text, which reads back as a
    /// float: `1.0`, `0.25`, `1e+16`.
    @inlinable
    public static func writeFloat(_ d: Double, into out: inout [UInt8]) {
        let text = d.description
        out.append(contentsOf: text.utf8)
        if !text.utf8.contains(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) {
            appendASCII(".0", into: &out)
        }
    }

    /// Writes `s` as a JSON string.
    @inlinable
    public static func writeString(_ s: String, into out: inout [UInt8]) {
        var s = s
        s.withUTF8 { writeString(utf8: $0, into: &out) }
    }

    /// Writes UTF-8 text as a JSON string.
    @inlinable
    public static func writeString(utf8 buf: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        guard let base = buf.baseAddress else { out.append(UInt8(ascii: "\"")); return }
        let n = buf.count
        var start = 0, i = 0
        while i < n {
            let byte = base[i]
            if byte >= 0x20 && byte != 0x22 && byte != 0x5C { i += 1; continue }
            if i > start { out.append(contentsOf: UnsafeBufferPointer(start: base + start, count: i - start)) }
            switch byte {
            case 0x22, 0x5C: out.append(0x5C); out.append(byte)
            case 0x0A: out.append(0x5C); out.append(UInt8(ascii: "n"))
            case 0x0D: out.append(0x5C); out.append(UInt8(ascii: "r"))
            case 0x09: out.append(0x5C); out.append(UInt8(ascii: "t"))
            default:
                appendASCII("\\u00", into: &out)
                out.append(Hex.digit(byte >> 4))
                out.append(Hex.digit(byte))
            }
            i += 1
            start = i
        }
        if n > start { out.append(contentsOf: UnsafeBufferPointer(start: base + start, count: n - start)) }
        out.append(UInt8(ascii: "\""))
    }

    /// The number of bytes `writeString` writes for `s`, quotes included.
    @inlinable
    public static func escapedSize(_ s: String) -> Int {
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

    /// Writes `items` as an array, each with `element`.
    @inlinable
    public static func writeArray<C: Collection>(_ items: C, into out: inout [UInt8],
                                                 _ element: (C.Element, inout [UInt8]) throws -> Void) rethrows {
        out.append(UInt8(ascii: "["))
        var first = true
        for item in items {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            try element(item, &out)
        }
        out.append(UInt8(ascii: "]"))
    }

    /// Writes `members` as a canonical object: keys sorted, each value with `value`.
    @inlinable
    public static func writeCanonicalObject<V>(_ members: [String: V], into out: inout [UInt8],
                                               _ value: (V, inout [UInt8]) throws -> Void) rethrows {
        out.append(UInt8(ascii: "{"))
        var first = true
        for key in members.keys.sorted() {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            writeString(key, into: &out)
            out.append(UInt8(ascii: ":"))
            try value(members[key]!, &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// Writes `members` as an object, in their order.
    @inlinable
    public static func writeObject<V>(_ members: [(String, V)], into out: inout [UInt8],
                                      _ value: (V, inout [UInt8]) throws -> Void) rethrows {
        out.append(UInt8(ascii: "{"))
        var first = true
        for (key, member) in members {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            writeString(key, into: &out)
            out.append(UInt8(ascii: ":"))
            try value(member, &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// Appends the bytes of an ASCII literal.
    @inlinable
    public static func appendASCII(_ s: StaticString, into out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
    }
}
