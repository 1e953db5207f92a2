/// Numbers as text without `String(format:)`, whose `CVarArg` boxing costs a dynamic
/// cast and a protocol-conformance scan per call, on the start-up path
/// (docs/performance.md, "What start-up avoids").
public enum DecimalText {
    /// `n` in decimal, left-padded with zeros to at least `width` digits: `padded(7, 2)`
    /// is `07`. A negative `n` keeps its sign before the zeros (`-07`).
    public static func padded(_ n: Int, _ width: Int) -> String {
        let digits = String(n.magnitude)
        let zeros = String(repeating: "0", count: max(0, width - digits.count))
        return (n < 0 ? "-" : "") + zeros + digits
    }

    /// `x` rounded to `decimals` places (0…9), as `%.Nf` would print it for a finite
    /// value whose magnitude stays below 9.2e18 / 10^decimals: `fixed(1.25, 1)` is
    /// `1.3` (halves round away from zero), `fixed(-0.04, 1)` is `-0.0` → `0.0`.
    /// Other values (infinite, NaN, huge) fall back to Swift's own description.
    public static func fixed(_ x: Double, _ decimals: Int) -> String {
        let places = min(max(decimals, 0), 9)
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaled = (x.magnitude * scale).rounded(.toNearestOrAwayFromZero)
        guard x.isFinite, scaled < 9.2e18 else { return "\(x)" }
        let units = UInt64(scaled)
        let divisor = UInt64(scale)
        let whole = String(units / divisor)
        let sign = x < 0 && units != 0 ? "-" : ""
        guard places > 0 else { return sign + whole }
        let fraction = String(units % divisor)
        return sign + whole + "." + String(repeating: "0", count: places - fraction.count) + fraction
    }
}
