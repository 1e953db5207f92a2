import CLua

extension BindingCall {
    /// Calls `body` with argument n's bytes as Lua holds them, without copying; empty if
    /// the argument is not a string (numbers are not converted: converting allocates,
    /// and an allocation may raise). The pointer is valid only during `body`: the string
    /// stays on the Lua stack for the whole call.
    func withRawBytes<R>(_ n: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let empty = UnsafeRawBufferPointer(start: nil, count: 0)
        guard n <= count, lua_type(state, Int32(n)) == LUA_TSTRING else { return try body(empty) }
        var length = 0
        guard let p = lua_tolstring(state, Int32(n), &length) else { return try body(empty) }
        return try body(UnsafeRawBufferPointer(start: p, count: length))
    }
}
