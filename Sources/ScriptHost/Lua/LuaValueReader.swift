import CLua

/// Registry references the runtime creates once per state.
struct LuaRefs: Sendable {
    var null: Int32 = LUA_NOREF
    var arrayMeta: Int32 = LUA_NOREF
    var errorMeta: Int32 = LUA_NOREF

    /// Whether the value at `index` is registry[ref]. Stack effect: none.
    func isRef(_ ref: Int32, index: Int32, in L: OpaquePointer) -> Bool {
        guard ref != LUA_NOREF, lua_checkstack(L, 1) != 0 else { return false }
        let absIndex = lua_absindex(L, index)
        hs_push_ref(L, ref)
        defer { lua_settop(L, -2) }
        return lua_rawequal(L, absIndex, -1) != 0
    }

    /// Whether the table at `index` has registry[ref] as its metatable. Stack effect: none.
    func hasMetatable(_ ref: Int32, index: Int32, in L: OpaquePointer) -> Bool {
        guard ref != LUA_NOREF, lua_checkstack(L, 2) != 0 else { return false }
        let absIndex = lua_absindex(L, index)
        guard lua_getmetatable(L, absIndex) != 0 else { return false }
        hs_push_ref(L, ref)
        defer { lua_settop(L, -3) }
        return lua_rawequal(L, -1, -2) != 0
    }
}

/// Converts Lua values to `ScriptValue` with raw, non-raising access only.
/// Stack effect: none, whether it succeeds or throws. With a budget, what it builds is
/// charged as it goes (`MemoryBudget`), so a huge table stops the run at the memory
/// cap instead of growing the Swift side without bound.
struct LuaValueReader {
    struct Failure: Error { let message: String }

    let state: OpaquePointer
    let refs: LuaRefs
    let budget: MemoryBudget?
    /// The state's handles (nil: a handle reads as an error, as for a data-only state).
    let handles: HandleRegistry?
    /// The tables being read, outermost first: a cycle is a table already on this path.
    /// (An array searched from the end, at most `JSONCodec.maxDepth` long: a `Set` of
    /// pointers would cost a protocol-conformance scan the first time a process makes one.)
    private var visiting: [UnsafeRawPointer] = []

    init(state: OpaquePointer, refs: LuaRefs, budget: MemoryBudget? = nil, handles: HandleRegistry? = nil) {
        self.state = state
        self.refs = refs
        self.budget = budget
        self.handles = handles
    }

    mutating func read(_ index: Int32, depth: Int) throws -> ScriptValue {
        let L = state
        switch lua_type(L, index) {
        case LUA_TNIL, LUA_TNONE: return .nilValue
        case LUA_TBOOLEAN: return .bool(lua_toboolean(L, index) != 0)
        case LUA_TNUMBER:
            if lua_isinteger(L, index) != 0 { return .integer(Int64(lua_tointegerx(L, index, nil))) }
            return .number(lua_tonumberx(L, index, nil))
        case LUA_TSTRING:
            var len = 0
            let p = lua_tolstring(L, index, &len)!
            let bytes = UnsafeRawBufferPointer(start: p, count: len)
            if len > 15 { try budget?.charge(len + MemoryBudget.Cost.string) }
            if let s = String(validating: bytes, as: UTF8.self) { return .string(s) }
            return .bytes(Array(bytes))
        case LUA_TTABLE:
            if refs.isRef(refs.null, index: index, in: L) { return .null }
            return try readTable(index, depth: depth)
        case LUA_TUSERDATA where hs_is_handle(L, index) != 0:
            guard let handle = handles?.handle(Int(hs_handle_id(L, index))) else {
                throw Failure(message: "cannot convert a handle here")
            }
            return .handle(handle)
        case let t:
            throw Failure(message: "cannot convert a \(String(cString: lua_typename(L, t))) value")
        }
    }

    private mutating func readTable(_ index: Int32, depth: Int) throws -> ScriptValue {
        let L = state
        guard depth < JSONCodec.maxDepth else {
            throw Failure(message: "table nesting deeper than \(JSONCodec.maxDepth) levels")
        }
        let absIndex = lua_absindex(L, index)
        let identity = lua_topointer(L, absIndex)!
        guard !visiting.contains(identity) else { throw Failure(message: "table contains a cycle") }
        visiting.append(identity)
        defer { visiting.removeLast() }
        guard lua_checkstack(L, 3) != 0 else { throw Failure(message: "out of stack space") }
        try budget?.charge(MemoryBudget.Cost.container)
        let top = lua_gettop(L)
        defer { lua_settop(L, top) }   // the key lua_next left, on every way out

        if let items = try readSequence(absIndex, depth: depth) { return .array(items) }
        let markedArray = refs.hasMetatable(refs.arrayMeta, index: absIndex, in: L)
        var fields: [String: ScriptValue] = [:]
        var indexed: [Int64: ScriptValue] = [:]
        lua_pushnil(L)
        while lua_next(L, absIndex) != 0 {
            try budget?.charge(MemoryBudget.Cost.entry)
            let value = try read(-1, depth: depth + 1)
            switch lua_type(L, -2) {
            case LUA_TSTRING:
                var len = 0
                let p = lua_tolstring(L, -2, &len)!
                if len > 15 { try budget?.charge(len + MemoryBudget.Cost.string) }
                guard let key = String(validating: UnsafeRawBufferPointer(start: p, count: len), as: UTF8.self) else {
                    throw Failure(message: "table key is not valid UTF-8")
                }
                fields[key] = value
            case LUA_TNUMBER where lua_isinteger(L, -2) != 0:
                indexed[Int64(lua_tointegerx(L, -2, nil))] = value
            case let t:
                let what = t == LUA_TNUMBER ? "a float key" : "a \(String(cString: lua_typename(L, t))) key"
                throw Failure(message: "table has \(what); only string keys or a sequence 1..n can be converted")
            }
            lua_settop(L, -2)   // pop the value, keep the key for lua_next
        }
        if !indexed.isEmpty && !fields.isEmpty {
            throw Failure(message: "table mixes string keys and integer keys; use one or the other")
        }
        if !indexed.isEmpty || markedArray {
            guard fields.isEmpty else { throw Failure(message: "array marked with json.array has string keys") }
            var items = [ScriptValue]()
            items.reserveCapacity(indexed.count)
            for i in 1...Int64(max(indexed.count, 1)) where !indexed.isEmpty {
                guard let v = indexed[i] else {
                    throw Failure(message: "table is not a sequence: key \(i) is missing (keys must be 1..\(indexed.count))")
                }
                items.append(v)
            }
            return .array(items)
        }
        return .object(fields)
    }

    /// The fast path for a proper sequence `1..n` (n > 0) with no other keys: read in
    /// order into an array, without the intermediate dictionary of the general path.
    /// nil when the table is anything else (the general path then says what is wrong).
    /// Stack effect: none.
    private mutating func readSequence(_ absIndex: Int32, depth: Int) throws -> [ScriptValue]? {
        let L = state
        let n = Int(lua_rawlen(L, absIndex))
        guard n > 0 else { return nil }
        var items = [ScriptValue]()
        items.reserveCapacity(n)
        for i in 1...n {
            try budget?.charge(MemoryBudget.Cost.value)
            guard lua_rawgeti(L, absIndex, lua_Integer(i)) > LUA_TNIL else {
                lua_settop(L, -2)
                return nil
            }
            let value = try read(-1, depth: depth + 1)
            lua_settop(L, -2)
            items.append(value)
        }
        // Any key besides 1..n (a string, a float, n+1 after a hole) sends the table
        // to the general path.
        var keys = 0
        lua_pushnil(L)
        while lua_next(L, absIndex) != 0 {
            lua_settop(L, -2)
            keys += 1
            guard keys <= n, lua_isinteger(L, -1) != 0 else {
                lua_settop(L, -2)
                return nil
            }
        }
        return keys == n ? items : nil
    }
}
