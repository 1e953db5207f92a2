import HubClient
import Foundation
import SystemText

/// Run ids. A run id names a run in the journal and seeds every idempotency key the
/// run derives, so it must be unique for a new run and stable for a resumed one.
public enum RunID {
    /// A new run id: `run_` + the UTC time (`20261130T142233Z`) + `_` + 4 random hex
    /// digits, e.g. `run_20261130T142233Z_9f3a`. Ids sort by start time (to the second).
    public static func generate<R: RandomNumberGenerator>(now: Date, using rng: inout R) -> String {
        let suffix = String(UInt16(truncatingIfNeeded: rng.next()), radix: 16)
        return "run_\(compactUTC(now))_\(String(repeating: "0", count: 4 - suffix.count))\(suffix)"
    }

    /// A new run id from `clock` and the system's random source.
    public static func generate(clock: () -> Date = { Date() }) -> String {
        var rng = SystemRandomNumberGenerator()
        return generate(now: clock(), using: &rng)
    }

    /// The id of a scheduled job's fire: `job_<name>_<scheduled time>`, e.g.
    /// `job_nightly-audit_20261130T020000Z`. Deterministic, so two schedulers firing the
    /// same job at the same scheduled time derive the same idempotency keys. Characters
    /// of `name` outside `[A-Za-z0-9._-]` become `-`, and then the name is followed by
    /// 8 hex digits of its SHA-256 so that distinct names stay distinct.
    public static func forJob(name: String, scheduledAt: Date) -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-".unicodeScalars)
        var safe = String(String.UnicodeScalarView(name.unicodeScalars.map { allowed.contains($0) ? $0 : "-" }))
        if safe != name || safe.isEmpty { safe += "-" + Digest.sha256Hex(name).prefix(8) }
        return "job_\(safe)_\(compactUTC(scheduledAt))"
    }

    /// `yyyyMMdd'T'HHmmss'Z'` in UTC.
    static func compactUTC(_ date: Date) -> String {
        let c = UTCTime.components(date)
        let p = DecimalText.padded
        return p(c.year, 4) + p(c.month, 2) + p(c.day, 2) + "T" + p(c.hour, 2) + p(c.minute, 2) + p(c.second, 2) + "Z"
    }
}

/// UTC calendar fields without a formatter (thread-safe, locale-free).
package enum UTCTime {
    static func components(_ date: Date) -> UTCFields {
        UTCFields(secondsSince1970: Int64(date.timeIntervalSince1970.rounded(.down)))
    }

    /// ISO 8601 to the second: `2026-11-30T14:22:33Z`.
    package static func iso8601(_ date: Date) -> String { components(date).description }

    /// Parses what `iso8601` writes (and nothing looser).
    package static func parseISO8601(_ text: String) -> Date? {
        let parts = text.split(whereSeparator: { "-T:Z".contains($0) }).compactMap { Int($0) }
        guard parts.count == 6, text.count == 20, text.hasSuffix("Z") else { return nil }
        var tm = tm()
        tm.tm_year = Int32(parts[0] - 1900)
        tm.tm_mon = Int32(parts[1] - 1)
        tm.tm_mday = Int32(parts[2])
        tm.tm_hour = Int32(parts[3])
        tm.tm_min = Int32(parts[4])
        tm.tm_sec = Int32(parts[5])
        return Date(timeIntervalSince1970: TimeInterval(timegm(&tm)))
    }
}

extension Journal {
    /// A run id the journal does not hold yet. Ids have 16 random bits per second, so two
    /// runs started in the same second share one once in 65 536 pairs: the second must
    /// not resume the first (`startNewRun` refuses the rare race this check cannot see).
    public func newRunID(generate: () -> String = { RunID.generate() }) throws -> String {
        for _ in 0..<16 {
            let id = generate()
            if try !runExists(id: id) { return id }
        }
        throw HubConfigError("could not find a run id the journal does not hold in 16 tries; is the clock right? (date -u)")
    }
}
