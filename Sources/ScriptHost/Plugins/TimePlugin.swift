import Foundation

/// `time`: RFC 3339 timestamps for recipes that compare or compute times.
///
/// Contract: a *timestamp* is an RFC 3339 string in UTC (`2026-12-01T04:56:00Z`, the
/// Hub's own form, so it can go straight into a Hub filter) and *epoch seconds* are a
/// Lua number (an integer, or a float when there is a fraction of a second).
/// `now`, `days_ago`, `add` and `format` return timestamps; `parse` and `diff` return
/// numbers. Arguments that take "a time" accept either form. Parsing is strict
/// (`RFC3339.parse`); an invalid text is `bad argument #1 to 'time.parse' (not an RFC
/// 3339 timestamp: '2026-13-01')`.
public enum TimePlugin {
    /// `now` is the wall clock in seconds since the epoch; tests inject a fixed one.
    public static func make(now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) -> Plugin {
        Plugin(
            module: "time",
            summary: "RFC 3339 timestamps in UTC, the Hub's form (`2026-12-01T04:56:00Z`). `now`, `days_ago`, `add` and `format` return timestamp strings (whole seconds unless there is a fraction); `parse` and `diff` return seconds (an integer, or a float when a fraction of a second is involved). Where an argument is a time, a timestamp string or epoch seconds both work. Parsing is strict: `YYYY-MM-DDThh:mm:ss[.fraction](Z|±hh:mm)` with real dates (leap years included), nothing else; years 0001–9999. Timestamps in the same form compare correctly as strings, but offsets and fractions do not: compare `time.parse` values.",
            functions: [
                ScriptFunction("now", summary: "time.now() -> timestamp: the current time in UTC, whole seconds, e.g. `2026-12-01T04:56:00Z`") { _ in
                    .value(.string(try format(wholeSeconds: now())))
                },
                ScriptFunction("parse", summary: "time.parse(timestamp) -> epoch seconds: `time.parse(\"2026-12-01T05:56:00+01:00\")` is 1796100960; with a fraction, a float (`2026-12-01T04:56:00.25Z` → 1796100960.25)") { call in
                    guard call.isString(1) else { throw call.typeError(1, expected: "string") }
                    let text = try call.string(1)
                    guard let instant = RFC3339.parse(text) else { throw notATimestamp(call, 1, text) }
                    return .value(number(instant))
                },
                ScriptFunction("format", summary: "time.format(epoch [, \"date\" or \"datetime\"]) -> `2026-12-01T04:56:00Z` (default) or `2026-12-01`; a fraction of a second is kept to the microsecond") { call in
                    let dateOnly: Bool
                    switch try call.optionalString(2) {
                    case nil, "datetime": dateOnly = false
                    case "date": dateOnly = true
                    case let other?: throw call.argumentError(2, "'date' or 'datetime' expected, got '\(shown(other))'")
                    }
                    if call.isString(1) { throw call.typeError(1, expected: "number") }
                    let epoch = try call.number(1)
                    return .value(.string(try format(epoch, call: call, argument: 1, dateOnly: dateOnly)))
                },
                ScriptFunction("days_ago", summary: "time.days_ago(n) -> timestamp: now minus n days of 86,400 s (n may be fractional; negative is the future)") { call in
                    let days = try call.number(1)
                    return .value(.string(try format(now().rounded(.down) - days * 86_400, call: call, argument: 1)))
                },
                ScriptFunction("add", summary: "time.add(time, seconds) -> timestamp: `time.add(\"2028-02-28T12:00:00Z\", 86400)` is `2028-02-29T12:00:00Z`") { call in
                    let start = try instant(call, 1)
                    let seconds = try call.number(2)
                    return .value(.string(try format(double(start) + seconds, call: call, argument: 2)))
                },
                ScriptFunction("diff", summary: "time.diff(a, b) -> seconds from b to a (a − b; negative when a is earlier)") { call in
                    let a = try instant(call, 1), b = try instant(call, 2)
                    if a.fraction == nil, b.fraction == nil {
                        let (d, overflow) = a.seconds.subtractingReportingOverflow(b.seconds)
                        if !overflow { return .value(.integer(d)) }
                    }
                    return .value(.number(double(a) - double(b)))
                },
            ])
    }

    // MARK: Arguments

    /// Argument n as an instant: a timestamp string, or epoch seconds.
    static func instant(_ call: BindingCall, _ n: Int) throws -> RFC3339.Instant {
        if call.isString(n) {
            let text = try call.string(n)
            guard let instant = RFC3339.parse(text) else { throw notATimestamp(call, n, text) }
            return instant
        }
        if let whole = try? call.optionalInteger(n) { return RFC3339.Instant(seconds: whole, fraction: nil) }
        guard !call.isNil(n), let epoch = try? call.number(n) else {
            throw call.argumentError(n, "timestamp string or epoch seconds expected, got \(call.typeName(n))")
        }
        guard epoch.isFinite, abs(epoch) < 1e15 else { throw outOfRange(call, n) }
        let whole = epoch.rounded(.down)
        return RFC3339.Instant(seconds: Int64(whole), fraction: epoch - whole)
    }

    static func notATimestamp(_ call: BindingCall, _ n: Int, _ text: String) -> ScriptMessageError {
        call.argumentError(n, "not an RFC 3339 timestamp: '\(shown(text))'")
    }

    static func outOfRange(_ call: BindingCall, _ n: Int) -> ScriptMessageError {
        call.argumentError(n, "time out of range: years 0001 to 9999")
    }

    /// At most 40 characters of a rejected text, so an error line stays a line.
    static func shown(_ text: String) -> String {
        text.count <= 40 ? text : String(text.prefix(40)) + "…"
    }

    // MARK: Conversions

    static func number(_ instant: RFC3339.Instant) -> ScriptValue {
        guard let fraction = instant.fraction else { return .integer(instant.seconds) }
        return .number(Double(instant.seconds) + fraction)
    }

    static func double(_ instant: RFC3339.Instant) -> Double {
        Double(instant.seconds) + (instant.fraction ?? 0)
    }

    /// Epoch seconds as a timestamp, the fraction rounded to the microsecond.
    static func format(_ epoch: Double, call: BindingCall, argument: Int, dateOnly: Bool = false) throws -> String {
        guard epoch.isFinite else { throw outOfRange(call, argument) }
        var whole = epoch.rounded(.down)
        var micros = ((epoch - whole) * 1_000_000).rounded()
        if micros >= 1_000_000 { whole += 1; micros = 0 }
        guard whole >= Double(RFC3339.earliest), whole <= Double(RFC3339.latest) else { throw outOfRange(call, argument) }
        return RFC3339.format(seconds: Int64(whole), micros: Int(micros), dateOnly: dateOnly)
    }

    /// The clock's reading as a timestamp of whole seconds.
    static func format(wholeSeconds epoch: Double) throws -> String {
        let whole = epoch.rounded(.down)
        guard whole.isFinite, whole >= Double(RFC3339.earliest), whole <= Double(RFC3339.latest) else {
            throw ScriptMessageError("time.now: the clock reads \(epoch), outside years 0001 to 9999")
        }
        return RFC3339.format(seconds: Int64(whole))
    }
}
