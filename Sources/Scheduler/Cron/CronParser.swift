/// The matching sets of a parsed cron expression.
///
/// `dayOfMonthStar` / `dayOfWeekStar` say the field was written starting with `*`
/// (`*` or `*/n`). As in Vixie cron, a day matches when both day fields match if either
/// one starts with `*`, and when either matches if neither does.
struct CronFields: Hashable, Sendable {
    var minutes = CronBits()
    var hours = CronBits()
    var daysOfMonth = CronBits()
    var months = CronBits()
    var daysOfWeek = CronBits()
    var dayOfMonthStar = false
    var dayOfWeekStar = false

    /// Whether the day `day` of a month, falling on `weekday` (0 = Sunday), matches.
    func dayMatches(day: Int, weekday: Int) -> Bool {
        let byDate = daysOfMonth.contains(day), byWeekday = daysOfWeek.contains(weekday)
        return dayOfMonthStar || dayOfWeekStar ? byDate && byWeekday : byDate || byWeekday
    }

    /// Whether any date matches at all. Every month has every weekday, and every valid
    /// date falls on every weekday within 400 years, so the only schedules that never
    /// fire need a day of the month that none of their months has (`0 0 30 2 *`).
    var canFire: Bool {
        guard dayOfMonthStar || dayOfWeekStar, let firstDay = daysOfMonth.nearest(1, forward: true) else { return true }
        return (1...12).contains { months.contains($0) && firstDay <= WallTime.daysIn(month: $0, year: 2000) }
    }
}

/// Reads the text of a cron expression into `CronFields`, or throws a `SchedulerError`
/// that quotes the expression and names the field and the value at fault.
struct CronParser {
    /// The `@` macros and the five fields each stands for.
    static let macros: KeyValuePairs<String, String> = [
        "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
        "@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *",
    ]

    /// The expression as quoted in errors.
    let expression: String

    func parse() throws -> CronFields {
        var text = expression
        if text.hasPrefix("@") {
            let word = text.lowercased()
            if let expansion = Self.macros.first(where: { $0.key == word })?.value {
                text = expansion
            } else if let first = word.split(whereSeparator: \.isWhitespace).first,
                      Self.macros.contains(where: { $0.key == first }) {
                throw fail(.cronUnknownMacro, "\(first) must stand alone")
            } else if word == "@reboot" {
                throw fail(.cronUnknownMacro, "@reboot is not supported: a job needs a time to fire")
            } else {
                let known = Self.macros.map(\.key)
                let list = known.dropLast().joined(separator: ", ") + " or " + known.last!
                throw fail(.cronUnknownMacro, "unknown macro \(expression) (use \(list))")
            }
        }
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard fields.count == 5 else { throw fail(.cronFieldCount, "expected 5 fields, got \(fields.count)") }
        var result = CronFields()
        result.minutes = try bits(fields[0], .minute)
        result.hours = try bits(fields[1], .hour)
        result.daysOfMonth = try bits(fields[2], .dayOfMonth)
        result.months = try bits(fields[3], .month)
        result.daysOfWeek = try bits(fields[4], .dayOfWeek)
        result.dayOfMonthStar = fields[2].hasPrefix("*")
        result.dayOfWeekStar = fields[4].hasPrefix("*")
        return result
    }

    private func fail(_ code: SchedulerError.Code, _ detail: String) -> SchedulerError {
        SchedulerError(code: code, message: "cron \"\(expression)\": \(detail)")
    }

    /// One field: a comma-separated list of items.
    private func bits(_ text: Substring, _ field: CronField) throws -> CronBits {
        var bits = CronBits()
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard !item.isEmpty else { throw fail(.cronSyntax, "\(field.name) \"\(text)\" has an empty list item") }
            try add(item, field, to: &bits)
        }
        return bits
    }

    /// One item: `*`, `a`, `a-b`, `*/n` or `a-b/n`.
    private func add(_ item: Substring, _ field: CronField, to bits: inout CronBits) throws {
        let parts = item.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { throw fail(.cronStep, "\(field.name) \"\(item)\" has more than one step") }
        let base = parts[0]
        guard !base.isEmpty else { throw fail(.cronSyntax, "\(field.name) \"\(item)\" has no value before the step") }
        let step = parts.count == 2 ? try stepValue(parts[1], field) : 1
        let low: Int, high: Int
        if base == "*" {
            (low, high) = (field.span.lowerBound, field.span.upperBound)
        } else if base.contains("-") {
            let ends = base.split(separator: "-", omittingEmptySubsequences: false)
            guard ends.count == 2, !ends[0].isEmpty, !ends[1].isEmpty else {
                throw fail(.cronSyntax, "\(field.name) \"\(base)\" is not a range: write a-b")
            }
            (low, high) = (try value(ends[0], field), try value(ends[1], field))
            guard low <= high else { throw fail(.cronReversedRange, "\(field.name) range \(base) is reversed") }
        } else {
            guard parts.count == 1 else {
                throw fail(.cronStep, "\(field.name) \"\(item)\": a step needs a range or * "
                    + "(write \(base)-\(field.span.upperBound)/\(parts[1]))")
            }
            low = try value(base, field)
            high = low
        }
        for v in stride(from: low, through: high, by: step) {
            bits.insert(field == .dayOfWeek && v == 7 ? 0 : v)
        }
    }

    private func stepValue(_ text: Substring, _ field: CronField) throws -> Int {
        guard !text.isEmpty, text.allSatisfy(\.isASCIIDigit) else {
            throw fail(.cronStep, "\(field.name) step \"\(text)\" is not a number")
        }
        let largest = field.span.upperBound - field.span.lowerBound
        guard let step = Int(text), step <= largest else {
            throw fail(.cronStep, "\(field.name) step \(text) is out of range 1-\(largest)")
        }
        guard step >= 1 else { throw fail(.cronStep, "\(field.name) step \(text) must be at least 1") }
        return step
    }

    /// A number in the field's bounds, or a month or weekday name.
    private func value(_ text: Substring, _ field: CronField) throws -> Int {
        if !text.isEmpty, text.allSatisfy(\.isASCIIDigit) {
            guard let n = Int(text), field.bounds.contains(n) else {
                throw fail(.cronOutOfRange, "\(field.name) \(text) is out of range "
                    + "\(field.bounds.lowerBound)-\(field.bounds.upperBound)")
            }
            return n
        }
        let names = field.names
        guard text.allSatisfy(\.isASCIILetter) else {
            throw fail(.cronSyntax, "\(field.name) \"\(text)\" is not a number")
        }
        guard !names.isEmpty else {
            throw fail(.cronUnknownName,
                       "\(field.name) \"\(text)\" is not a number (names are for month and day-of-week)")
        }
        guard let index = names.firstIndex(of: text.uppercased()) else {
            throw fail(.cronUnknownName, "unknown \(field.name) name \"\(text)\" (use \(names.first!)-\(names.last!))")
        }
        return field.span.lowerBound + index
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
    var isASCIILetter: Bool { isASCII && isLetter }
}
