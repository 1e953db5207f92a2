import Foundation
import SystemText

/// JSON string escapes in one form, so that text a decoder would read as a secret shows
/// the secret in a form a masker looks for.
enum JSONEscapes {
    /// `body` with each string escape written the one way hubscript's JSON writer writes
    /// it: `\uXXXX` of a character a JSON string may hold as it is (and a surrogate pair)
    /// becomes that character in UTF-8, `\/` becomes `/`; `"` and `\` stay `\"` and `\\`;
    /// a control character is `\n`, `\r`, `\t` or `\u00xx` (lower-case hex). A valid JSON
    /// text decodes to the same value before and after (a backslash occurs only inside
    /// strings). A body without a backslash, or that does not start (after white space)
    /// like a JSON object, array or string — a CSV export, a text page — is returned as it
    /// is. The work is linear in the body and never depends on any secret.
    static func canonical(_ body: Data) -> Data {
        guard let first = body.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }),
              [0x7B, 0x5B, 0x22].contains(first), body.contains(0x5C) else { return body }
        let bytes = [UInt8](body)
        let n = bytes.count
        var out: [UInt8] = []
        out.reserveCapacity(n)
        func hex4(_ at: Int) -> UInt32? {
            guard at + 4 <= n else { return nil }
            var value: UInt32 = 0
            for k in at..<(at + 4) {
                let c = bytes[k]
                let digit: UInt8
                switch c {
                case 0x30...0x39: digit = c - 0x30
                case 0x41...0x46: digit = c - 0x41 + 10
                case 0x61...0x66: digit = c - 0x61 + 10
                default: return nil
                }
                value = value << 4 | UInt32(digit)
            }
            return value
        }
        func appendCharacter(_ value: UInt32) {
            switch value {
            case 0x22: out += [0x5C, 0x22]
            case 0x5C: out += [0x5C, 0x5C]
            case 0x0A: out += [0x5C, 0x6E]
            case 0x0D: out += [0x5C, 0x72]
            case 0x09: out += [0x5C, 0x74]
            case 0..<0x20:
                out += Array("\\u00".utf8) + [Hex.digit(UInt8(value >> 4)), Hex.digit(UInt8(value & 15))]
            default:
                out += Array(String(Character(Unicode.Scalar(value)!)).utf8)
            }
        }
        var i = 0
        while i < n {
            let b = bytes[i]
            guard b == 0x5C, i + 1 < n else {
                out.append(b)
                i += 1
                continue
            }
            switch bytes[i + 1] {
            case 0x2F: out.append(0x2F); i += 2
            case 0x62: appendCharacter(0x08); i += 2
            case 0x66: appendCharacter(0x0C); i += 2
            case 0x75:
                guard let unit = hex4(i + 2) else { out += [b, bytes[i + 1]]; i += 2; continue }
                if (0xD800...0xDBFF).contains(unit), i + 11 < n, bytes[i + 6] == 0x5C, bytes[i + 7] == 0x75,
                   let low = hex4(i + 8), (0xDC00...0xDFFF).contains(low) {
                    appendCharacter(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
                    i += 12
                } else if (0xD800...0xDFFF).contains(unit) {
                    out += bytes[i..<(i + 6)]   // a lone surrogate: left for the decoder to judge
                    i += 6
                } else {
                    appendCharacter(unit)
                    i += 6
                }
            default:
                out += [b, bytes[i + 1]]
                i += 2
            }
        }
        return Data(out)
    }
}
