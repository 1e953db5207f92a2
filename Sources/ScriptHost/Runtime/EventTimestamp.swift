import Foundation

/// The `ts` field of `--json` events: UTC, ISO 8601 with milliseconds,
/// `2026-11-30T14:22:33.123Z`. Locale-free and thread-safe (no formatter).
public enum EventTimestamp {
    public static func string(_ date: Date = Date()) -> String {
        let ms = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var seconds = time_t(ms / 1000)
        var fields = tm()
        gmtime_r(&seconds, &fields)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(fields.tm_year) + 1900, Int(fields.tm_mon) + 1,
                      Int(fields.tm_mday), Int(fields.tm_hour), Int(fields.tm_min), Int(fields.tm_sec), Int(ms % 1000))
    }
}
