import SystemText

/// RFC 3339 timestamps ⇄ seconds since the Unix epoch, in pure Swift (proleptic
/// Gregorian calendar, no leap seconds, years 0001–9999).
///
/// Parsing accepts exactly `YYYY-MM-DDThh:mm:ss[.fraction](Z|±hh:mm)`: `T` and `Z` may
/// be lower case (RFC 3339 §5.6); every field must be in range for its month (leap
/// years included). A date alone, a space instead of `T`, a missing zone or a leap
/// second (`:60`) are refused: POSIX time has no leap seconds, and the Hub never
/// sends one.
public enum RFC3339 {
    /// The first and last second that format as four-digit years (0001-01-01T00:00:00Z
    /// and 9999-12-31T23:59:59Z).
    public static let earliest: Int64 = -62_135_596_800
    public static let latest: Int64 = 253_402_300_799

    /// A parsed timestamp: whole seconds since the epoch, and the fraction of a second
    /// when the text had one (`nil` for none, so `…:00.0Z` and `…:00Z` stay apart).
    public struct Instant: Equatable, Sendable {
        public var seconds: Int64
        public var fraction: Double?
    }

    /// `text` as an instant, or nil when it is not an RFC 3339 timestamp.
    public static func parse(_ text: String) -> Instant? {
        let b = Array(text.utf8)
        guard b.count >= 20, b.count <= 64 else { return nil }
        var i = 0
        func digits(_ n: Int) -> Int? {
            guard i + n <= b.count else { return nil }
            var v = 0
            for k in i..<(i + n) {
                guard b[k] >= 0x30, b[k] <= 0x39 else { return nil }
                v = v * 10 + Int(b[k] - 0x30)
            }
            i += n
            return v
        }
        func expect(_ chars: UInt8...) -> Bool {
            guard i < b.count, chars.contains(b[i]) else { return false }
            i += 1
            return true
        }
        guard let year = digits(4), expect(0x2D), let month = digits(2), expect(0x2D), let day = digits(2),
              expect(0x54, 0x74), let hour = digits(2), expect(0x3A), let minute = digits(2), expect(0x3A),
              let second = digits(2) else { return nil }
        guard year >= 1, (1...12).contains(month), day >= 1, day <= CivilDate.daysIn(month: month, year: year),
              hour <= 23, minute <= 59, second <= 59 else { return nil }
        var fraction: Double?
        if i < b.count, b[i] == 0x2E {
            i += 1
            let start = i
            var value = 0.0, scale = 1.0
            while i < b.count, b[i] >= 0x30, b[i] <= 0x39 {
                if i - start < 9 {   // nanoseconds at most; further digits cannot change a Double
                    value = value * 10 + Double(b[i] - 0x30)
                    scale *= 10
                }
                i += 1
            }
            guard i > start else { return nil }
            fraction = value / scale
        }
        var offset = 0
        if expect(0x5A, 0x7A) {
            offset = 0
        } else {
            guard i < b.count, b[i] == 0x2B || b[i] == 0x2D else { return nil }
            let sign = b[i] == 0x2D ? -1 : 1
            i += 1
            guard let oh = digits(2), expect(0x3A), let om = digits(2), oh <= 23, om <= 59 else { return nil }
            offset = sign * (oh * 3600 + om * 60)
        }
        guard i == b.count else { return nil }
        let days = CivilDate.days(year: year, month: month, day: day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second - offset)
        return Instant(seconds: seconds, fraction: fraction)
    }

    /// `seconds` (whole) as `YYYY-MM-DDThh:mm:ssZ`, or `YYYY-MM-DD` with `dateOnly`.
    /// `micros` (0–999 999) adds a fraction with trailing zeros dropped.
    /// Precondition: `earliest ≤ seconds ≤ latest`.
    public static func format(seconds: Int64, micros: Int = 0, dateOnly: Bool = false) -> String {
        let (days, secondOfDay) = CivilDate.dayAndSecond(Int(seconds))
        let (year, month, day) = CivilDate.date(days: days)
        let date = pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2)
        if dateOnly { return date }
        var time = pad(secondOfDay / 3600, 2) + ":" + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2)
        if micros > 0 {
            var digits = pad(micros, 6)
            while digits.hasSuffix("0") { digits.removeLast() }
            time += "." + digits
        }
        return date + "T" + time + "Z"
    }

    private static func pad(_ n: Int, _ width: Int) -> String {
        let s = String(n)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }
}
