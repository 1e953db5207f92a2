/// The five fields of a cron expression, in order, with what each may hold.
enum CronField: Int, CaseIterable, Sendable {
    case minute, hour, dayOfMonth, month, dayOfWeek

    /// The name errors use.
    var name: String {
        switch self {
        case .minute: "minute"
        case .hour: "hour"
        case .dayOfMonth: "day-of-month"
        case .month: "month"
        case .dayOfWeek: "day-of-week"
        }
    }

    /// The values that may be written (day-of-week 7 is Sunday again).
    var bounds: ClosedRange<Int> {
        switch self {
        case .minute: 0...59
        case .hour: 0...23
        case .dayOfMonth: 1...31
        case .month: 1...12
        case .dayOfWeek: 0...7
        }
    }

    /// What `*` covers.
    var span: ClosedRange<Int> { self == .dayOfWeek ? 0...6 : bounds }

    /// Three-letter names (matched case-insensitively), the first standing for
    /// `span.lowerBound`; empty for the numeric fields.
    var names: [String] {
        switch self {
        case .month: ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]
        case .dayOfWeek: ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"]
        default: []
        }
    }
}

/// A set of integers 0...63 in one word; each cron field is one.
struct CronBits: Hashable, Sendable {
    private(set) var raw: UInt64 = 0

    func contains(_ value: Int) -> Bool { raw >> UInt64(value) & 1 == 1 }

    mutating func insert(_ value: Int) { raw |= 1 << UInt64(value) }

    /// The smallest member ≥ `value` when `forward`, else the largest member ≤ `value`;
    /// nil when there is none. `value` must be in 0...63.
    func nearest(_ value: Int, forward: Bool) -> Int? {
        let candidates = forward ? raw & (~0 << UInt64(value)) : raw & (~0 >> UInt64(63 - value))
        guard candidates != 0 else { return nil }
        return forward ? candidates.trailingZeroBitCount : 63 - candidates.leadingZeroBitCount
    }
}
