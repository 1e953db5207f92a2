import Foundation
import SystemText

/// The `ts` field of `--json` events: UTC, ISO 8601 with milliseconds,
/// `2026-11-30T14:22:33.123Z`. Locale-free and thread-safe (no formatter).
public enum EventTimestamp {
    public static func string(_ date: Date = Date()) -> String {
        let ms = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        let (seconds, millisecond) = ms % 1000 < 0 ? (ms / 1000 - 1, ms % 1000 + 1000) : (ms / 1000, ms % 1000)
        let text = UTCFields(secondsSince1970: seconds).description
        return text.dropLast() + "." + DecimalText.padded(Int(millisecond), 3) + "Z"
    }
}
