/// The ways a secret commonly appears in text a server sends back: as itself,
/// JSON-escaped (with and without `\/`), base64 and base64url at each of the three
/// offsets it can start at, hex (lower and upper case), percent-encoded (as RFC 3986,
/// Foundation's `.alphanumerics`, `encodeURIComponent` or every byte; upper and lower
/// case hex), with its letters all upper or all lower case, and in UTF-16 (either byte
/// order).
///
/// Each form becomes a `SecretMatcher.Pattern` masked by `mask`. Forms shorter than
/// `minimumLength` bytes are left out (they would mask ordinary text).
public enum SecretForms {
    public static let minimumLength = 4

    /// The raw form and its JSON-escaped forms only: what output and the journal mask.
    public static func plain(_ secret: [UInt8], mask: [UInt8]) -> [SecretMatcher.Pattern] {
        ([secret] + jsonEscaped(secret)).filter { $0.count >= minimumLength }.map { SecretMatcher.Pattern($0, mask: mask) }
    }

    /// Every form listed above.
    public static func all(_ secret: [UInt8], mask: [UInt8]) -> [SecretMatcher.Pattern] {
        guard secret.count >= minimumLength else { return [] }
        var forms = plain(secret, mask: mask)
        var texts = [hex(secret, upper: false), hex(secret, upper: true), caseChanged(secret, upper: true),
                     caseChanged(secret, upper: false), utf16(secret, bigEndian: false), utf16(secret, bigEndian: true)]
        for keep in PercentKeeps.allCases {
            texts += [percent(secret, keeping: keep, upper: true), percent(secret, keeping: keep, upper: false)]
        }
        for text in texts where text.count >= minimumLength && !forms.contains(where: { $0.bytes == text }) {
            forms.append(SecretMatcher.Pattern(text, mask: mask))
        }
        for alphabet in [base64Standard, base64URL] {
            for offset in 0..<3 {
                let (core, before, after) = base64Core(secret, offset: offset, alphabet: alphabet)
                guard core.count >= minimumLength, !forms.contains(where: { $0.bytes == core }) else { continue }
                // Either alphabet beside it: a core without `+/-_` is the same in both.
                forms.append(SecretMatcher.Pattern(core, mask: mask, extendBefore: before, extendAfter: after,
                                                   extendAlphabet: base64Standard + Array("-_".utf8)))
            }
        }
        return forms
    }

    static let base64Standard = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    static let base64URL = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// The base64 characters that depend on the secret's bits alone when it starts
    /// `offset` bytes into a 3-byte group, and whether a character mixing secret bits with
    /// the bytes around it sits before and after them.
    static func base64Core(_ secret: [UInt8], offset: Int, alphabet: [UInt8]) -> (core: [UInt8], before: Bool, after: Bool) {
        let startBit = offset * 8, endBit = startBit + secret.count * 8
        func bit(_ n: Int) -> UInt8 {   // bit n of the stream: `offset` zero bytes, then the secret
            let byte = n / 8 - offset
            return (secret[byte] >> UInt8(7 - n % 8)) & 1
        }
        var core: [UInt8] = []
        var j = (startBit + 5) / 6   // the first character whose six bits all belong to the secret
        while (j + 1) * 6 <= endBit {
            var v: UInt8 = 0
            for n in (j * 6)..<(j * 6 + 6) { v = v << 1 | bit(n) }
            core.append(alphabet[Int(v)])
            j += 1
        }
        return (core, startBit % 6 != 0, endBit % 6 != 0)
    }

    /// The secret with its ASCII letters in one case.
    static func caseChanged(_ secret: [UInt8], upper: Bool) -> [UInt8] {
        secret.map { b in
            if upper, b >= 0x61, b <= 0x7A { return b - 0x20 }
            if !upper, b >= 0x41, b <= 0x5A { return b + 0x20 }
            return b
        }
    }

    /// The secret's text in UTF-16 (a server answering in it); the secret as it is when it
    /// is not UTF-8.
    static func utf16(_ secret: [UInt8], bigEndian: Bool) -> [UInt8] {
        guard let text = String(validating: secret, as: UTF8.self) else { return secret }
        return text.utf16.flatMap { unit in
            bigEndian ? [UInt8(unit >> 8), UInt8(unit & 0xFF)] : [UInt8(unit & 0xFF), UInt8(unit >> 8)]
        }
    }

    static func hex(_ secret: [UInt8], upper: Bool) -> [UInt8] { Hex.encodedBytes(secret, uppercase: upper) }

    /// Which bytes a percent-encoder leaves as they are.
    enum PercentKeeps: CaseIterable {
        /// RFC 3986's unreserved: letters, digits, `-._~`.
        case unreserved
        /// Letters and digits only (Foundation's `.alphanumerics`).
        case alphanumerics
        /// JavaScript's `encodeURIComponent`: also `!'()*`.
        case component
        /// None: every byte as `%XX`.
        case none
    }

    static func percent(_ secret: [UInt8], keeping keep: PercentKeeps, upper: Bool) -> [UInt8] {
        var out: [UInt8] = []
        for b in secret {
            let alphanumeric = (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
            let kept: Bool = switch keep {
            case .none: false
            case .alphanumerics: alphanumeric
            case .unreserved: alphanumeric || Array("-._~".utf8).contains(b)
            case .component: alphanumeric || Array("-._~!'()*".utf8).contains(b)
            }
            if kept { out.append(b) } else { out += [0x25, Hex.digit(b >> 4, uppercase: upper), Hex.digit(b, uppercase: upper)] }
        }
        return out
    }

    /// The secret inside a JSON string: as hubscript's JSONWriter escapes it (`"`, `\`,
    /// `\n` `\r` `\t`, other control characters as `\u00xx`), and as other writers do
    /// (also `/` as `\/`, `\b` `\f`, DEL as `\u007f`). Forms equal to the secret are left out.
    static func jsonEscaped(_ secret: [UInt8]) -> [[UInt8]] {
        func escape(others: Bool) -> [UInt8] {
            var out: [UInt8] = []
            for b in secret {
                switch b {
                case 0x22: out += Array("\\\"".utf8)
                case 0x5C: out += Array("\\\\".utf8)
                case 0x0A: out += Array("\\n".utf8)
                case 0x0D: out += Array("\\r".utf8)
                case 0x09: out += Array("\\t".utf8)
                case 0x2F where others: out += Array("\\/".utf8)
                case 0x08 where others: out += Array("\\b".utf8)
                case 0x0C where others: out += Array("\\f".utf8)
                case 0..<0x20: out += Array("\\u00".utf8) + [Hex.digit(b >> 4), Hex.digit(b)]
                case 0x7F where others: out += Array("\\u007f".utf8)
                default: out.append(b)
                }
            }
            return out
        }
        var forms: [[UInt8]] = []
        for form in [escape(others: false), escape(others: true)] where form != secret && !forms.contains(form) { forms.append(form) }
        return forms
    }
}
