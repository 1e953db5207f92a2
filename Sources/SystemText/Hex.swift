/// Base-16 text of bytes: the one encoder and decoder for digests, ids, keys on disk,
/// signatures and the secret masker's hex forms.
public enum Hex {
    private static let lower: [UInt8] = Array("0123456789abcdef".utf8)
    private static let upper: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// The ASCII digit of `nibble` (0–15): `0`–`9`, then `a`–`f` (`A`–`F` when `uppercase`).
    @inlinable
    public static func digit(_ nibble: UInt8, uppercase: Bool = false) -> UInt8 {
        let n = nibble & 0x0F
        return n < 10 ? 0x30 + n : (uppercase ? 0x37 : 0x57) + n
    }

    /// Two ASCII digits a byte, high nibble first.
    public static func encodedBytes(_ bytes: some Sequence<UInt8>, uppercase: Bool = false) -> [UInt8] {
        let digits = uppercase ? upper : lower
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return out
    }

    /// `bytes` as text, two digits a byte (`[0xAB, 0x01]` → `ab01`).
    public static func encode(_ bytes: some Sequence<UInt8>, uppercase: Bool = false) -> String {
        String(decoding: encodedBytes(bytes, uppercase: uppercase), as: UTF8.self)
    }

    /// The bytes of hex `text` (digits of either case, an even number of them, nothing
    /// else: no prefix, no spaces); nil when it is anything else. Empty text is no bytes.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        decode(utf8: Array(text.utf8))
    }

    /// `decode` of ASCII bytes.
    public static func decode(utf8 digits: [UInt8]) -> [UInt8]? {
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        var i = 0
        while i < digits.count {
            guard let hi = value(digits[i]), let lo = value(digits[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }

    /// The value of one ASCII hex digit, or nil.
    public static func value(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x61...0x66: c - 0x57
        case 0x41...0x46: c - 0x37
        default: nil
        }
    }
}
