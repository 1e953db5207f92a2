import Foundation
import SystemText

/// Timestamps are whole UTC seconds since 1970 internally, RFC 3339 (`2026-01-15T12:00:00Z`)
/// on the wire. Formatting is hand-rolled because it runs for every field of every row.
enum Time {
    /// Formats epoch seconds as `YYYY-MM-DDTHH:MM:SSZ`. Straight-line on purpose: it runs
    /// for every timestamp of every row, also in debug builds.
    static func format(_ t: Int) -> String {
        String(unsafeUninitializedCapacity: 20) { fill(t, $0); return 20 }
    }

    /// Appends `"` + `format(t)` + `"` (a JSON string) to `out`, without allocating.
    static func writeJSON(_ t: Int, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { b in
            fill(t, b)
            out.append(contentsOf: UnsafeBufferPointer(b))
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Writes the 20 bytes of `format(t)` into `b`.
    private static func fill(_ t: Int, _ b: UnsafeMutableBufferPointer<UInt8>) {
        let (days, secs) = CivilDate.dayAndSecond(t)
        let (y, m, d) = CivilDate.date(days: days)
        let h = secs / 3600, mi = secs / 60 % 60, se = secs % 60
        b[0] = UInt8(48 + y / 1000 % 10); b[1] = UInt8(48 + y / 100 % 10)
        b[2] = UInt8(48 + y / 10 % 10); b[3] = UInt8(48 + y % 10); b[4] = 45
        b[5] = UInt8(48 + m / 10); b[6] = UInt8(48 + m % 10); b[7] = 45
        b[8] = UInt8(48 + d / 10); b[9] = UInt8(48 + d % 10); b[10] = 84
        b[11] = UInt8(48 + h / 10); b[12] = UInt8(48 + h % 10); b[13] = 58
        b[14] = UInt8(48 + mi / 10); b[15] = UInt8(48 + mi % 10); b[16] = 58
        b[17] = UInt8(48 + se / 10); b[18] = UInt8(48 + se % 10); b[19] = 90
    }

    /// Parses RFC 3339 (`Z` or `±HH:MM` offset, optional fraction, which is dropped) or a
    /// bare date `YYYY-MM-DD` (midnight UTC). A space before the offset is read as `+`,
    /// because an unencoded `+` in a query string decodes to a space. Nil when malformed.
    static func parse(_ s: String) -> Int? {
        let c = Array(s.utf8)
        func num(_ a: Int, _ n: Int) -> Int? {
            guard a + n <= c.count else { return nil }
            var v = 0
            for k in a..<a + n { guard c[k] >= 48, c[k] <= 57 else { return nil }; v = v * 10 + Int(c[k] - 48) }
            return v
        }
        guard let y = num(0, 4), c.count >= 10, c[4] == 45, let mo = num(5, 2), c[7] == 45, let d = num(8, 2),
              (1...12).contains(mo), (1...31).contains(d) else { return nil }
        let day = CivilDate.days(year: y, month: mo, day: d)
        if c.count == 10 { return day * 86_400 }
        guard c.count >= 20, c[10] == 84 || c[10] == 116 || c[10] == 32, let h = num(11, 2), c[13] == 58,
              let mi = num(14, 2), c[16] == 58, let se = num(17, 2), h < 24, mi < 60, se < 61 else { return nil }
        var k = 19
        if c[k] == 46 { k += 1; while k < c.count, c[k] >= 48, c[k] <= 57 { k += 1 } }
        guard k < c.count else { return nil }
        var offset = 0
        if c[k] == 90 || c[k] == 122 { guard k + 1 == c.count else { return nil } }
        else if c[k] == 43 || c[k] == 45 || c[k] == 32, k + 6 == c.count, let oh = num(k + 1, 2), c[k + 3] == 58, let om = num(k + 4, 2) {
            offset = (oh * 3600 + om * 60) * (c[k] == 45 ? -1 : 1)
        } else { return nil }
        return day * 86_400 + h * 3600 + mi * 60 + se - offset
    }
}
