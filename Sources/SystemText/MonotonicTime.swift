#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Seconds on the system's monotonic clock (`CLOCK_MONOTONIC`: never goes back; any
/// epoch), for pacing, timeouts and progress intervals. What
/// `ProcessInfo.processInfo.systemUptime` gave, without making `ProcessInfo`, whose first
/// use is a cost of every run's start (docs/performance.md). Every
/// source that compares such times uses this one clock.
public enum MonotonicTime {
    public static func seconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1_000_000_000
    }
}
