import Foundation

/// Compact JSON serialization into a byte buffer.
///
/// Output contract (responses and stored idempotent replies depend on it, byte for byte):
/// no whitespace; object keys in their stored order; strings escape only `"`, `\`,
/// `\n`, `\r`, `\t` and the other C0 controls (`\u00XX`, lowercase hex) — DEL and all
/// non-ASCII text are written raw as UTF-8; integers in decimal; doubles as Swift's
/// `description` (`null` when not finite).
extension JSON {
    /// Compact UTF-8 serialization.
    var data: Data {
        var out = [UInt8]()
        out.reserveCapacity(256)
        write(into: &out)
        return Data(out)
    }

    func write(into out: inout [UInt8]) {
        switch self {
        case .null: out.appendASCII("null")
        case .bool(let b): if b { out.appendASCII("true") } else { out.appendASCII("false") }
        case .int(let i): JSON.writeInt(i, into: &out)
        case .double(let d):
            if d.isFinite { out.append(contentsOf: String(d).utf8) } else { out.appendASCII("null") }
        case .string(let s): JSON.writeString(s, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            var first = true
            for item in items {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                item.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let pairs):
            out.append(UInt8(ascii: "{"))
            var first = true
            for pair in pairs {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                JSON.writeString(pair.0, into: &out)
                out.append(UInt8(ascii: ":"))
                pair.1.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        case .raw(let bytes): out.append(contentsOf: bytes)
        }
    }

    /// Writes `i` in decimal (the same text as `String(i)`), without allocating.
    static func writeInt(_ i: Int, into out: inout [UInt8]) {
        if i < 0 { out.append(UInt8(ascii: "-")) }
        var v = i.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buf in
            var n = 20
            repeat { n -= 1; buf[n] = 48 + UInt8(truncatingIfNeeded: v % 10); v /= 10 } while v > 0
            out.append(contentsOf: UnsafeBufferPointer(rebasing: buf[n...]))
        }
    }

    /// Writes `s` as a JSON string.
    static func writeString(_ s: String, into out: inout [UInt8]) {
        var s = s
        s.withUTF8 { writeString(utf8: $0, into: &out) }
    }

    /// Writes UTF-8 text as a JSON string. Runs of bytes that need no escape (nearly
    /// everything) are copied in one go.
    static func writeString(utf8 buf: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
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
                out.appendASCII("\\u00")
                out.append(hexDigit(byte >> 4)); out.append(hexDigit(byte & 0xF))
            }
            i += 1
            start = i
        }
        if n > start { out.append(contentsOf: UnsafeBufferPointer(start: base + start, count: n - start)) }
        out.append(UInt8(ascii: "\""))
    }

    /// Writes text SQLite returned (NUL-terminated, read up to the first NUL) as a JSON
    /// string, exactly as `writeString(String(cString: text))` would: text with a byte
    /// of 0x80 or more goes through `String(cString:)`, which repairs invalid UTF-8.
    static func writeString(cText text: UnsafePointer<UInt8>, into out: inout [UInt8]) {
        let n = strlen(UnsafeRawPointer(text).assumingMemoryBound(to: CChar.self))
        let buf = UnsafeBufferPointer(start: text, count: n)
        var ascii = true
        for b in buf where b >= 0x80 { ascii = false; break }
        if ascii { writeString(utf8: buf, into: &out) } else { writeString(String(cString: text), into: &out) }
    }

    private static func hexDigit(_ v: UInt8) -> UInt8 { v < 10 ? 48 + v : 87 + v }
}

extension [UInt8] {
    /// Appends the bytes of an ASCII literal.
    mutating func appendASCII(_ s: StaticString) {
        append(contentsOf: UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
    }
}
