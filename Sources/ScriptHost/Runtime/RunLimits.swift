/// The limits a run executes under. Precedence, lowest first: these defaults, the
/// manifest's `limits`, the command line (`--timeout`); `hostCeiling` caps them all.
public struct RunLimits: Sendable, Equatable {
    /// Memory the Lua state may hold, in bytes (default 256 MiB).
    public var memoryBytes: Int = 256 << 20
    /// Lua VM instructions the run may execute; nil (the default) counts none.
    /// An exact count needs Lua 5.4's count hook, which traces every instruction
    /// (about 2x slower on call-heavy code), so it is on only when asked for; the
    /// deadline and the memory cap hold without it.
    public var instructions: Int64?
    /// Wall-clock seconds for the whole run (default one hour).
    public var timeoutSeconds: Double = 3600
    /// Largest string one string.rep / string.format / table.concat may build (64 MiB).
    public var buildBytes: Int = 64 << 20
    /// Writes the run may make (nil: unlimited). Enforced by the bindings that write.
    public var writes: Int?

    public init() {}

    /// The most any recipe may ask for.
    public static let hostCeiling: RunLimits = {
        var l = RunLimits()
        l.memoryBytes = 2 << 30
        l.instructions = nil
        l.timeoutSeconds = 24 * 3600
        l.buildBytes = 256 << 20
        return l
    }()

    /// These limits with every field capped by `ceiling`.
    public func capped(by ceiling: RunLimits) -> RunLimits {
        var l = self
        l.memoryBytes = min(memoryBytes, ceiling.memoryBytes)
        if let cap = ceiling.instructions { l.instructions = min(instructions ?? cap, cap) }
        l.timeoutSeconds = min(timeoutSeconds, ceiling.timeoutSeconds)
        l.buildBytes = min(buildBytes, ceiling.buildBytes)
        return l
    }
}

/// Which limit stopped a run.
public enum LimitKind: String, Sendable, Equatable {
    case memory, instructions, timeout, host
}
