import CLua

/// The monotonic clock the limits use (CLOCK_MONOTONIC seconds), for code outside
/// `Lua/`, which does not import CLua.
enum ScriptClock {
    static func now() -> Double { hs_monotonic_now() }
}
