import Foundation

/// This machine's clock against a Hub's (its `Date` header, read when the answer
/// arrived): schedules, token lifetimes and the times in the journal go wrong when they
/// are far apart.
public struct ClockSkew: Sendable, Equatable {
    /// How far ahead of the Hub this machine is, in seconds (negative: behind).
    public let seconds: Double

    /// The most the clocks may differ before `hubscript doctor` says so.
    public static let tolerance = 60.0

    public init(hubDate: Date, localDate: Date) { seconds = localDate.timeIntervalSince(hubDate) }

    public var isTolerable: Bool { abs(seconds) <= Self.tolerance }

    /// `within 1 s of the Hub's`, or `this machine's clock is 300 s ahead of the Hub's; …`.
    public var text: String {
        // The header has whole seconds: a second either way is no skew.
        let shown = Int(abs(seconds).rounded())
        if isTolerable { return "within \(max(1, shown)) s of the Hub's" }
        return "this machine's clock is \(shown) s \(seconds > 0 ? "ahead of" : "behind") the Hub's; schedules, token lifetimes "
            + "and times in the journal go wrong: set the clock by NTP (timedatectl set-ntp true)"
    }
}
