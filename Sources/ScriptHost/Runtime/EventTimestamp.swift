import Foundation
import SystemText

/// The `ts` field of `--json` events: UTC, ISO 8601 with milliseconds,
/// `2026-11-30T14:22:33.123Z`. Locale-free and thread-safe (no formatter).
public enum EventTimestamp {
    public static func string(_ date: Date = Date()) -> String {
        let ms = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var seconds = time_t(ms / 1000)
        var fields = tm()
        gmtime_r(&seconds, &fields)
        let p = DecimalText.padded
        return p(Int(fields.tm_year) + 1900, 4) + "-" + p(Int(fields.tm_mon) + 1, 2) + "-" + p(Int(fields.tm_mday), 2)
            + "T" + p(Int(fields.tm_hour), 2) + ":" + p(Int(fields.tm_min), 2) + ":" + p(Int(fields.tm_sec), 2)
            + "." + p(Int(ms % 1000), 3) + "Z"
    }
}
