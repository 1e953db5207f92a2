/// Masks pieces of a secret: every run of at least `minimumLength` (12) bytes of a text
/// that also occurs in the secret, so a server's text cut short (an error quoting its first
/// bytes) or a secret split into parts shows none of them.
///
/// For short texts that quote a server (error messages): the work is about the text's
/// length times the secret's, squared in the longest run; a long answer is masked with
/// `SecretMatcher` instead. Runs shorter than `minimumLength` are left: a token's readable
/// parts (`satk_test_`, `sandbox`, `machine`) would mask ordinary text.
public enum SecretPieces {
    public static let minimumLength = 12

    /// `text` with each maximal run of bytes that occurs in `secret` (at least
    /// `minimumLength` long) replaced by `mask`.
    public static func masked(_ text: String, secret: String, mask: String, minimumLength: Int = minimumLength) -> String {
        let t = Array(text.utf8), s = Array(secret.utf8)
        guard s.count >= minimumLength, t.count >= minimumLength else { return text }
        var windows = Set<ArraySlice<UInt8>>()
        for start in 0...(s.count - minimumLength) { windows.insert(s[start..<(start + minimumLength)]) }
        func occurs(_ piece: ArraySlice<UInt8>) -> Bool {
            guard piece.count <= s.count else { return false }
            for start in 0...(s.count - piece.count) where s[start..<(start + piece.count)] == piece { return true }
            return false
        }
        var covered = [Bool](repeating: false, count: t.count)
        var any = false
        for i in 0...(t.count - minimumLength) where windows.contains(t[i..<(i + minimumLength)]) {
            var end = i + minimumLength
            while end < t.count, occurs(t[i...end]) { end += 1 }
            for k in i..<end { covered[k] = true }
            any = true
        }
        guard any else { return text }
        var out: [UInt8] = []
        var i = 0
        while i < t.count {
            if covered[i] {
                out += Array(mask.utf8)
                while i < t.count, covered[i] { i += 1 }
            } else {
                out.append(t[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
