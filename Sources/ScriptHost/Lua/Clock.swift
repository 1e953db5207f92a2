import CLua

/// The monotonic clock the C side measures deadlines with (`hs_monotonic_now`), so
/// the Swift side's timings and the hook's deadline agree.
enum MonotonicClock {
    /// Seconds since an arbitrary fixed point; never goes back.
    static func now() -> Double { hs_monotonic_now() }
}

extension LimitKind {
    /// The limit a VM's `limitHit` code (`HS_LIMIT_*` in shim.h) names; unknown codes
    /// are the host's.
    init(limitCode code: Int32) {
        switch code {
        case Int32(HS_LIMIT_MEMORY): self = .memory
        case Int32(HS_LIMIT_INSTRUCTIONS): self = .instructions
        case Int32(HS_LIMIT_DEADLINE): self = .timeout
        default: self = .host
        }
    }
}
