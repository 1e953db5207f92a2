import Foundation
import Testing
@testable import Scheduler

/// The instant an RFC 3339 text names (any offset), read by Foundation's own parser.
func instant(_ text: String) -> Date {
    guard let date = ISO8601DateFormatter().date(from: text) else {
        Issue.record("not an RFC 3339 time without a fraction: \(text)")
        return .distantPast
    }
    return date
}

/// `date` on `zone`'s wall clock with its offset (`2026-03-08T03:00:00-04:00`), "nil" for nil.
func local(_ date: Date?, _ zone: String = "UTC") -> String {
    guard let date else { return "nil" }
    let formatter = ISO8601DateFormatter()
    formatter.timeZone = TimeZone(identifier: zone)!
    return formatter.string(from: date)
}

/// The next `count` fires after `start`, as `local` texts in the schedule's zone.
func nextFires(_ schedule: CronSchedule, after start: String, count: Int) -> [String] {
    var out: [String] = []
    var cursor: Date? = instant(start)
    while out.count < count, let from = cursor {
        cursor = schedule.nextFire(after: from)
        out.append(local(cursor, schedule.timeZone.identifier))
    }
    return out
}

extension CronBits {
    /// The members, ascending.
    var members: [Int] { (0..<64).filter(contains) }
}

/// The message of the `SchedulerError` that `body` throws, prefixed by its code
/// (`cron_out_of_range: cron "61 * * * *": …`), or "no error".
func failure(_ body: () throws -> Void) -> String {
    do {
        try body()
        return "no error"
    } catch let error as SchedulerError {
        return "\(error.code): \(error.message)"
    } catch {
        return "not a SchedulerError: \(error)"
    }
}
