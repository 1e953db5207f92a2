import Foundation

/// The wall clock of one time zone: instants (whole seconds since the epoch) to wall-clock
/// seconds and back, with the zone's rules from Foundation's `TimeZone`.
///
/// Going back from wall time to an instant has two special cases, both settled by one
/// rule — a wall time belongs to the **first instant at which the clock reaches it**:
/// - in a spring-forward gap the wall time never shows, and the first instant whose wall
///   time is at or past it is the end of the gap (02:30 on a New York spring-forward day
///   is 03:00 EDT);
/// - in a fall-back overlap the wall time shows twice, and the first is the earlier one
///   (01:30 on a New York fall-back day is 01:30 EDT, not 01:30 EST).
///
/// Both answers assume at most one offset change within 36 hours of the time asked
/// about; real zones change their offset a few times a year at most.
struct ZoneClock: Sendable {
    let timeZone: TimeZone

    /// Half the window searched for an offset change around a wall time (36 hours).
    private static let reach: Int64 = 129_600

    /// The zone's offset from UTC at `instant`, in seconds.
    func offset(at instant: Int64) -> Int64 {
        Int64(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(instant))))
    }

    func wallSeconds(at instant: Int64) -> Int64 { instant + offset(at: instant) }

    /// The first instant whose wall time is at or past `wall` (see the type's rule).
    func firstInstant(reaching wall: Int64) -> Int64 {
        var offsets: [Int64] = []
        for probe in [wall - Self.reach, wall, wall + Self.reach] {
            let o = offset(at: probe)
            if !offsets.contains(o) { offsets.append(o) }
        }
        // An offset o is in force at wall - o exactly when the clock shows `wall` then.
        if let exact = offsets.filter({ offset(at: wall - $0) == $0 }).map({ wall - $0 }).min() {
            return exact
        }
        // A gap: the clock jumps from below `wall` (at wall - largest offset) to past it
        // (at wall - smallest offset). Find the jump.
        var below = wall - offsets.max()!, reached = wall - offsets.min()!
        while reached - below > 1 {
            let mid = below + (reached - below) / 2
            if wallSeconds(at: mid) >= wall { reached = mid } else { below = mid }
        }
        return reached
    }

    /// A wall time at least as late as any the clock has shown up to `instant`: its wall
    /// time now, or — in the repeated hour after a fall-back — the latest one before the
    /// clock was set back (plus up to the overlap's length).
    func latestWall(through instant: Int64) -> Int64 {
        let now = offset(at: instant), before = offset(at: instant - Self.reach)
        return instant + max(now, before)
    }
}
