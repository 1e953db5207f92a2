#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Descriptor limits (`ulimit -n`) and the spare descriptor a server keeps for when
/// they are reached.
extension Socket {
    /// Opens a descriptor held in reserve (on /dev/null), so that a server out of
    /// descriptors can still accept one pending connection to refuse it. -1 if none.
    static func openSpareDescriptor() -> Int32 {
        open("/dev/null", O_RDONLY | O_CLOEXEC)
    }

    /// The process's soft and hard limits on open descriptors (`ulimit -n`), nil if unknown.
    static func descriptorLimits() -> (soft: Int, hard: Int)? {
        var limit = rlimit()
        guard getrlimit(nofileResource, &limit) == 0 else { return nil }
        return (Int(clamping: limit.rlim_cur), Int(clamping: limit.rlim_max))
    }

    /// Raises the soft limit on open descriptors to `wanted` (at most the hard limit).
    /// Returns the soft limit in force afterwards, nil if unknown.
    static func raiseDescriptorLimit(to wanted: Int) -> Int? {
        var limit = rlimit()
        guard getrlimit(nofileResource, &limit) == 0 else { return nil }
        let target = min(rlim_t(max(0, wanted)), limit.rlim_max)
        if target > limit.rlim_cur {
            limit.rlim_cur = target
            _ = setrlimit(nofileResource, &limit)
        }
        return descriptorLimits()?.soft
    }

    #if os(Linux)
    private static let nofileResource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let nofileResource = RLIMIT_NOFILE
    #endif
}

extension timeval {
    /// `seconds` (at least a millisecond) as a `timeval`.
    init(_ seconds: Double) {
        let clamped = max(0.001, seconds)
        self.init()
        tv_sec = .init(clamped.rounded(.down))
        tv_usec = .init((clamped - clamped.rounded(.down)) * 1_000_000)
    }
}
