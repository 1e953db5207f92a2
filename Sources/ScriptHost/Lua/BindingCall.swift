import CLua

/// The arguments of one call from Lua into a Swift binding. Valid only during the call.
///
/// Every accessor uses only Lua APIs that cannot raise or allocate (type checks,
/// `lua_tolstring` on actual strings, `lua_next`, `lua_rawgeti` after
/// `lua_checkstack`), so reading arguments never unwinds a Swift frame. Errors read
/// like Lua's own: `bad argument #2 to 'json.encode' (table expected, got nil)`.
public struct BindingCall {
    let state: OpaquePointer
    let refs: LuaRefs
    private let names: Unmanaged<FunctionNames>
    private let id: Int
    /// How many arguments were passed.
    public let count: Int
    /// What this call may build on the Swift side; argument reading charges it.
    /// Bindings that build large things (JSON, files read into memory) charge it too.
    public var budget: MemoryBudget { _budget.takeUnretainedValue() }
    /// Owned by the `LuaVM`, which outlives every call (no retain on the hot path).
    private let _budget: Unmanaged<MemoryBudget>
    /// The state's opaque handles, owned by the `LuaVM` like the budget.
    private let handles: Unmanaged<HandleRegistry>

    init(state: OpaquePointer, refs: LuaRefs, names: Unmanaged<FunctionNames>, id: Int, budget: Unmanaged<MemoryBudget>,
         handles: Unmanaged<HandleRegistry>) {
        self.state = state
        self.refs = refs
        self.names = names
        self.id = id
        self._budget = budget
        self.handles = handles
        self.count = Int(lua_gettop(state))
    }

    /// The function's qualified name, e.g. `json.encode`, for error messages.
    public var functionName: String { names.takeUnretainedValue().names[id] }

    // MARK: Errors

    /// `bad argument #n to 'name' (detail)`.
    public func argumentError(_ n: Int, _ detail: String) -> ScriptMessageError {
        ScriptMessageError("bad argument #\(n) to '\(functionName)' (\(detail))")
    }

    func typeError(_ n: Int, expected: String) -> ScriptMessageError {
        argumentError(n, "\(expected) expected, got \(typeName(n))")
    }

    /// Lua's name for argument n's type; "no value" past the last argument.
    public func typeName(_ n: Int) -> String {
        if n > count { return "no value" }
        if isNull(n) { return "null" }
        return String(cString: lua_typename(state, lua_type(state, Int32(n))))
    }

    func luaType(_ n: Int) -> Int32 { n > count ? LUA_TNONE : lua_type(state, Int32(n)) }

    /// True when argument n is a string (not a number that Lua would convert).
    public func isString(_ n: Int) -> Bool { luaType(n) == LUA_TSTRING }

    /// True when argument n is absent or nil.
    public func isNil(_ n: Int) -> Bool { luaType(n) <= LUA_TNIL }

    func isNull(_ n: Int) -> Bool {
        lua_type(state, Int32(n)) == LUA_TTABLE && refs.isRef(refs.null, index: Int32(n), in: state)
    }

    // MARK: Scalars

    public func string(_ n: Int) throws -> String {
        guard let s = try optionalString(n) else { throw typeError(n, expected: "string") }
        return s
    }

    public func optionalString(_ n: Int) throws -> String? {
        switch luaType(n) {
        case LUA_TNONE, LUA_TNIL: return nil
        case LUA_TSTRING:
            return try withRawBytes(n) { bytes in
                if bytes.count > 15 { try budget.charge(bytes.count + MemoryBudget.Cost.string) }
                guard let s = String(validating: bytes, as: UTF8.self) else {
                    throw argumentError(n, "string is not valid UTF-8")
                }
                return s
            }
        case LUA_TNUMBER:
            return lua_isinteger(state, Int32(n)) != 0
                ? String(lua_tointegerx(state, Int32(n), nil)) : LuaNumberFormat.format(lua_tonumberx(state, Int32(n), nil))
        default: throw typeError(n, expected: "string")
        }
    }

    public func integer(_ n: Int) throws -> Int64 {
        guard let i = try optionalInteger(n) else { throw typeError(n, expected: "number") }
        return i
    }

    public func optionalInteger(_ n: Int) throws -> Int64? {
        var ok: Int32 = 0
        let i = n <= count ? lua_tointegerx(state, Int32(n), &ok) : 0
        if ok != 0 { return Int64(i) }
        let t = luaType(n)
        if t <= LUA_TNIL { return nil }
        if t == LUA_TNUMBER { throw argumentError(n, "number has no integer representation") }
        throw typeError(n, expected: "number")
    }

    public func number(_ n: Int) throws -> Double {
        var ok: Int32 = 0
        let d = lua_tonumberx(state, Int32(n), &ok)
        guard luaType(n) > LUA_TNIL, ok != 0 else { throw typeError(n, expected: "number") }
        return d
    }

    public func boolean(_ n: Int) throws -> Bool {
        switch luaType(n) {
        case LUA_TBOOLEAN: return lua_toboolean(state, Int32(n)) != 0
        default: throw typeError(n, expected: "boolean")
        }
    }

    public func optionalBoolean(_ n: Int) throws -> Bool? {
        isNil(n) ? nil : try boolean(n)
    }

    // MARK: Values and tables

    /// Argument n converted by the bridging rules (see `ScriptValue`).
    public func value(_ n: Int) throws -> ScriptValue {
        guard n <= count else { return .nilValue }
        do {
            var converter = LuaValueReader(state: state, refs: refs, budget: budget, handles: handles.takeUnretainedValue())
            return try converter.read(Int32(n), depth: 0)
        } catch let error as LuaValueReader.Failure {
            throw argumentError(n, error.message)
        }
    }

    /// Argument n, which must be a table, converted to a value.
    public func table(_ n: Int) throws -> ScriptValue {
        guard luaType(n) == LUA_TTABLE, !isNull(n) else { throw typeError(n, expected: "table") }
        return try value(n)
    }

    /// Argument n, which must be a table or absent (then an empty object).
    public func optionalTable(_ n: Int) throws -> ScriptValue {
        isNil(n) ? .object([:]) : try table(n)
    }

    /// Calls `body` with argument n's bytes as Lua holds them, without copying; empty if
    /// the argument is not a string (numbers are not converted: `lua_tolstring` would
    /// convert in place, which allocates, and an allocation may raise through Swift).
    /// The pointer is valid only during `body`: the string stays on the Lua stack for
    /// the whole call.
    public func withRawBytes<R>(_ n: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let empty = UnsafeRawBufferPointer(start: nil, count: 0)
        guard n <= count, lua_type(state, Int32(n)) == LUA_TSTRING else { return try body(empty) }
        var length = 0
        guard let p = lua_tolstring(state, Int32(n), &length) else { return try body(empty) }
        return try body(UnsafeRawBufferPointer(start: p, count: length))
    }
}

/// Formats floats as Lua's `%.14g` does, keeping a `.0` on integral values.
enum LuaNumberFormat {
    static func format(_ d: Double) -> String {
        if d.isNaN { return d.sign == .minus ? "-nan" : "nan" }
        if d.isInfinite { return d < 0 ? "-inf" : "inf" }
        var s = String(format: "%.14g", d)
        if !s.contains(".") && !s.contains("e") && !s.contains("n") && !s.contains("i") { s += ".0" }
        return s
    }
}

/// Qualified names of registered functions by id (looked up only for messages).
final class FunctionNames {
    var names: [String] = []
}
