/// Random secrets the console makes (its access token, session ids, CSRF tokens) and
/// the comparison that checks them.
public enum AccessToken {
    /// 32 random bytes as 64 lowercase hex characters, from the system's
    /// cryptographically secure generator (`getrandom` on Linux).
    public static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        var out = ""
        out.reserveCapacity(64)
        for _ in 0..<4 {
            let word = generator.next() as UInt64
            let hex = String(word, radix: 16)
            out += String(repeating: "0", count: 16 - hex.count) + hex
        }
        return out
    }

    /// Whether `given` equals `expected`, in a time that depends only on their lengths
    /// (not on where they first differ), so a guess cannot be improved byte by byte.
    public static func matches(_ given: String, _ expected: String) -> Bool {
        let a = Array(given.utf8), b = Array(expected.utf8)
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for i in 0..<b.count {
            difference |= (i < a.count ? a[i] : 0) ^ b[i]
        }
        return difference == 0 && !b.isEmpty
    }
}
