/// What a binding may build on the Swift side during one call, so that nothing a
/// binding makes from Lua input escapes the run's memory cap.
///
/// At the start of each binding call the budget is set to the run's memory cap (less
/// the buffers of outer calls still being pushed, see `LuaVM.invoke`). Argument
/// reading (`BindingCall`), the result buffers (`ResultOps`) and bindings that build
/// large things (`json.encode`/`decode`, …) charge it as they go; going over stops
/// the run with the memory limit, like Lua running out. Lua's own memory is capped
/// by the allocator, so a run holds at most about twice the cap (the charges are
/// estimates of Swift's real cost, on the high side: see `Cost`). The budget does not
/// subtract Lua's use: Lua's garbage would count, and Swift cannot collect it.
/// One budget per state, used on the state's thread only.
public final class MemoryBudget {
    /// Bytes left in this call; `Int.max` when the run has no memory cap.
    @exclusivity(unchecked) public private(set) var remaining: Int = .max

    init() {}

    func reset(to bytes: Int) { remaining = bytes }

    /// Takes `bytes` from the budget; throws `ScriptMemoryLimitError` when it runs out.
    @inline(__always)
    public func charge(_ bytes: Int) throws {
        remaining &-= bytes
        if remaining < 0 { throw ScriptMemoryLimitError() }
    }

    /// Estimated Swift costs, in bytes, of what bindings build.
    public enum Cost {
        /// A `ScriptValue` in an array, or a scalar result (24 bytes, times three while
        /// an array doubles its storage).
        public static let value = 64
        /// One entry of a dictionary (key, value, hash table slack).
        public static let entry = 64
        /// A table, array or dictionary header.
        public static let container = 96
        /// The header of a heap string (its bytes are charged on top).
        public static let string = 48
    }
}

/// Thrown by `MemoryBudget.charge`: the run stops with the memory limit (exit 4).
public struct ScriptMemoryLimitError: Error, Sendable, CustomStringConvertible {
    public init() {}
    public var description: String { "not enough memory" }
}
