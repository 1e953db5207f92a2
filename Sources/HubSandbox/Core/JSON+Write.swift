import Foundation
import JSONKit

/// Compact JSON serialization into a byte buffer, by the one writer (`JSONWriter`).
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
        case .null: JSONWriter.writeNull(into: &out)
        case .bool(let b): JSONWriter.writeBool(b, into: &out)
        case .int(let i): JSONWriter.writeInteger(Int64(i), into: &out)
        case .double(let d): if d.isFinite { JSONWriter.writeFloat(d, into: &out) } else { JSONWriter.writeNull(into: &out) }
        case .string(let s): JSONWriter.writeString(s, into: &out)
        case .array(let items): JSONWriter.writeArray(items, into: &out) { item, out in item.write(into: &out) }
        case .object(let pairs): JSONWriter.writeObject(pairs, into: &out) { value, out in value.write(into: &out) }
        case .raw(let bytes): out.append(contentsOf: bytes)
        }
    }

    /// Writes text SQLite returned (NUL-terminated, read up to the first NUL) as a JSON
    /// string, exactly as `writeString(String(cString: text))` would: text with a byte
    /// of 0x80 or more goes through `String(cString:)`, which repairs invalid UTF-8.
    static func writeString(cText text: UnsafePointer<UInt8>, into out: inout [UInt8]) {
        let n = strlen(UnsafeRawPointer(text).assumingMemoryBound(to: CChar.self))
        let buf = UnsafeBufferPointer(start: text, count: n)
        var ascii = true
        for b in buf where b >= 0x80 { ascii = false; break }
        if ascii {
            JSONWriter.writeString(utf8: buf, into: &out)
        } else {
            JSONWriter.writeString(String(cString: text), into: &out)
        }
    }
}

extension [UInt8] {
    /// Appends the bytes of an ASCII literal.
    mutating func appendASCII(_ s: StaticString) { JSONWriter.appendASCII(s, into: &self) }
}
