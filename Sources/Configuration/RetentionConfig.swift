import Foundation
import HubClient
import ScriptHost

/// An age as retention takes it: a whole number of minutes, hours, days or weeks
/// (`30m`, `12h`, `90d`, `2w`).
public struct RetentionAge: Sendable, Equatable, CustomStringConvertible {
    public let seconds: TimeInterval
    /// As written (`90d`).
    public let description: String

    public static let usage = "an age such as 90d, 12h, 2w or 30m (a whole number and m, h, d or w)"

    /// Nil when `text` is not such an age.
    public init?(_ text: String) {
        let units: [Character: TimeInterval] = ["m": 60, "h": 3600, "d": 86_400, "w": 604_800]
        guard let unit = text.last, let size = units[unit], text.count >= 2, text.count <= 7,
              text.dropLast().allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int(text.dropLast()) else { return nil }
        seconds = TimeInterval(n) * size
        description = text
    }

    /// The moment this age before `now`.
    public func before(_ now: Date) -> Date { now.addingTimeInterval(-seconds) }
}

/// The configuration file's `retention` key: how long the journal keeps runs, applied
/// daily by the serving commands (`jobs serve`, `listen`, `console`) and by
/// `hubscript runs prune` when it is given no `--older-than`.
///
/// ```lua
/// retention = { older_than = "90d", keep_failed = "365d" }
/// ```
///
/// Contracts: `older_than` is required: runs older than it go, with their writes,
/// reads, fire records and export folders. `keep_failed` (optional) is how long a run
/// that did not succeed — and so can still be resumed — is kept; without it such runs
/// are never pruned. It may not be shorter than `older_than`. Any other key is refused.
public struct RetentionConfig: Sendable, Equatable {
    public let olderThan: RetentionAge
    public let keepFailed: RetentionAge?

    public init(olderThan: RetentionAge, keepFailed: RetentionAge?) {
        self.olderThan = olderThan
        self.keepFailed = keepFailed
    }

    /// The file's `retention` key; nil when it has none.
    static func parse(_ value: ScriptValue, file: URL) throws -> RetentionConfig? {
        guard case .object(let top) = value, let setting = top["retention"] else { return nil }
        let usage = #"retention must be a table like { older_than = "90d", keep_failed = "365d" }"#
        func fail(_ message: String) -> HubConfigError { HubConfigError("config \(file.path): \(message)") }
        guard case .object(let fields) = setting else { throw fail(usage) }
        for key in fields.keys.sorted() where !["older_than", "keep_failed"].contains(key) {
            throw fail("retention: unknown key \(key) (the keys are older_than and keep_failed)")
        }
        func age(_ key: String) throws -> RetentionAge? {
            guard let field = fields[key] else { return nil }
            guard let text = field.stringValue, let age = RetentionAge(text) else {
                throw fail("retention.\(key) must be \(RetentionAge.usage) in quotes, got \(field.stringValue.map { "\"\($0)\"" } ?? "a \(field.luaTypeName)")")
            }
            return age
        }
        guard let olderThan = try age("older_than") else {
            throw fail(#"retention needs older_than, how long runs are kept (for instance older_than = "90d")"#)
        }
        let keepFailed = try age("keep_failed")
        if let keepFailed, keepFailed.seconds < olderThan.seconds {
            throw fail("retention.keep_failed (\(keepFailed)) is shorter than older_than (\(olderThan)): runs that did not succeed are kept at least as long as the others")
        }
        return RetentionConfig(olderThan: olderThan, keepFailed: keepFailed)
    }
}
