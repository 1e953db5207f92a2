import CLua
import Foundation

/// Builds the push operations (`hs_op`) that C performs after a Swift body returned.
///
/// Buffers are malloc'd and reused across calls, so a binding call allocates nothing
/// on the fast path; strings are copied into a byte arena whose addresses are patched
/// into the ops by `finish()`. The buffers stay valid until the next `reset()`, and
/// each binding-call level has its own `ResultOps` (see `LuaVM.invoke`), so a call
/// made from a finalizer while C performs these ops never touches them.
/// Used on one thread only, so exclusivity checks are off for its hot fields.
final class ResultOps {
    @exclusivity(unchecked) private var ops: UnsafeMutablePointer<hs_op>
    @exclusivity(unchecked) private var opCapacity = 64
    @exclusivity(unchecked) private(set) var opCount = 0
    @exclusivity(unchecked) private var bytes: UnsafeMutablePointer<CChar>
    @exclusivity(unchecked) private var byteCapacity = 4096
    @exclusivity(unchecked) private var byteCount = 0
    /// Whether any string op needs its pointer patched in `finish()` (the op's `s`
    /// holds the arena offset until then).
    @exclusivity(unchecked) private var hasStrings = false
    /// Values the ops leave on the Lua stack now, and at most (`stackNeed`), so C can
    /// reserve the stack before performing them.
    @exclusivity(unchecked) private var height = 0
    @exclusivity(unchecked) private(set) var stackNeed = 0
    @exclusivity(unchecked) var refs = LuaRefs()
    /// Charged when the buffers grow (nil: host-built values, not capped).
    @exclusivity(unchecked) var budget: MemoryBudget?
    /// Registers Swift functions met inside values; returns their ids.
    var registerFunction: (ScriptFunction) -> Int = { _ in 0 }
    /// Registers handles met inside values; returns their ids.
    var registerHandle: (ScriptHandle) throws -> Int = { _ in throw HandleRegistry.Full() }

    init() {
        ops = .allocate(capacity: opCapacity)
        bytes = .allocate(capacity: byteCapacity)
    }

    deinit {
        ops.deallocate()
        bytes.deallocate()
    }

    /// Buffers larger than this are given back at the next `reset()`, so one large
    /// result does not stay allocated for the rest of the run.
    static let keptOpCapacity = 4096
    static let keptByteCapacity = 1 << 20

    @inline(__always)
    func reset() {
        opCount = 0
        byteCount = 0
        hasStrings = false
        height = 0
        stackNeed = 0
        if opCapacity > Self.keptOpCapacity || byteCapacity > Self.keptByteCapacity { shrink() }
    }

    private func shrink() {
        ops.deallocate()
        bytes.deallocate()
        opCapacity = 64
        byteCapacity = 4096
        ops = .allocate(capacity: opCapacity)
        bytes = .allocate(capacity: byteCapacity)
    }

    /// Bytes the buffers hold now (what a large result costs on the Swift side).
    var allocatedBytes: Int { opCapacity * MemoryLayout<hs_op>.stride + byteCapacity }

    /// Records that an op changes the stack height by `delta` (pushes +1, sets -1/-2).
    @inline(__always)
    private func move(_ delta: Int) {
        height += delta
        if height > stackNeed { stackNeed = height }
    }

    @inline(__always)
    private func append(_ kind: Int32, i: lua_Integer = 0, d: Double = 0, len: Int = 0) throws {
        if opCount == opCapacity {
            // Charged the whole new buffer each time: covers old and new while copying.
            try budget?.charge(opCapacity * 2 * MemoryLayout<hs_op>.stride)
            let bigger = UnsafeMutablePointer<hs_op>.allocate(capacity: opCapacity * 2)
            bigger.moveInitialize(from: ops, count: opCount)
            ops.deallocate()
            ops = bigger
            opCapacity *= 2
        }
        ops[opCount] = hs_op(kind: kind, i: i, d: d, s: nil, len: len)
        opCount += 1
        switch kind {
        case Int32(HS_OP_SETFIELD): height -= 2
        case Int32(HS_OP_SETINDEX): height -= 1
        case Int32(HS_OP_SETMETA): move(1); height -= 1   // the metatable, briefly
        case Int32(HS_OP_HANDLE): move(1); height -= 1    // the userdata replaces its label
        default: move(1)
        }
    }

    private func appendBytes(_ source: UnsafeRawBufferPointer) throws {
        if byteCount + source.count > byteCapacity {
            var newCapacity = byteCapacity * 2
            while newCapacity < byteCount + source.count { newCapacity *= 2 }
            try budget?.charge(newCapacity)   // the whole new arena: old and new live while copying
            let bigger = UnsafeMutablePointer<CChar>.allocate(capacity: newCapacity)
            bigger.update(from: bytes, count: byteCount)
            bytes.deallocate()
            bytes = bigger
            byteCapacity = newCapacity
        }
        if let base = source.baseAddress {
            UnsafeMutableRawPointer(bytes + byteCount).copyMemory(from: base, byteCount: source.count)
        }
        hasStrings = true
        try append(Int32(HS_OP_STR), i: lua_Integer(byteCount), len: source.count)
        byteCount += source.count
    }

    func pushString(_ s: String) throws {
        var s = s
        try s.withUTF8 { try appendBytes(UnsafeRawBufferPointer($0)) }
    }

    func pushBytes(_ b: [UInt8]) throws {
        try b.withUnsafeBytes { try appendBytes($0) }
    }

    @inline(__always)
    func pushInteger(_ i: Int64) throws { try append(Int32(HS_OP_INT), i: lua_Integer(i)) }
    func pushRef(_ ref: Int32) throws { try append(Int32(HS_OP_REF), i: lua_Integer(ref)) }
    func pushFunction(id: Int) throws { try append(Int32(HS_OP_FUNC), i: lua_Integer(id)) }
    func newTable(array: Int, hash: Int) throws { try append(Int32(HS_OP_TABLE), i: lua_Integer(array), len: hash) }
    func setField() throws { try append(Int32(HS_OP_SETFIELD)) }
    func setIndex(_ i: Int) throws { try append(Int32(HS_OP_SETINDEX), i: lua_Integer(i)) }
    func setMetatable(_ ref: Int32) throws { try append(Int32(HS_OP_SETMETA), i: lua_Integer(ref)) }

    /// Pushes one value. Arrays get the array marker so empty arrays round-trip.
    /// Throws `ScriptMemoryLimitError` when the buffers outgrow the budget.
    func push(_ value: ScriptValue) throws {
        switch value {
        case .nilValue: try append(Int32(HS_OP_NIL))
        case .null: try pushRef(refs.null)
        case .bool(let b): try append(Int32(HS_OP_BOOL), i: b ? 1 : 0)
        case .integer(let i): try append(Int32(HS_OP_INT), i: lua_Integer(i))
        case .number(let d): try append(Int32(HS_OP_NUM), d: d)
        case .string(let s): try pushString(s)
        case .bytes(let b): try pushBytes(b)
        case .function(let f): try pushFunction(id: registerFunction(f))
        case .handle(let h):
            let id: Int
            do { id = try registerHandle(h) } catch {
                throw ScriptMessageError("too many handles in one run (more than \(HandleRegistry.maxHandles))")
            }
            try pushString(h.label)
            try append(Int32(HS_OP_HANDLE), i: lua_Integer(id))
        case .array(let items):
            try newTable(array: items.count, hash: 0)
            for (n, item) in items.enumerated() {
                try push(item)
                try setIndex(n + 1)
            }
            try setMetatable(refs.arrayMeta)
        case .object(let fields):
            try newTable(array: 0, hash: fields.count)
            for (key, item) in fields {
                try pushString(key)
                try push(item)
                try setField()
            }
        }
    }

    /// Pushes a structured error table with the error metatable.
    func pushStructuredError(_ error: ScriptStructuredError) throws {
        try push(error.tableValue)
        try setMetatable(refs.errorMeta)
    }

    /// Patches string addresses; returns the op buffer for C. Valid until `reset()`.
    @inline(__always)
    func finish() -> UnsafePointer<hs_op> {
        if hasStrings {
            for k in 0..<opCount where ops[k].kind == Int32(HS_OP_STR) {
                ops[k].s = UnsafePointer(bytes + Int(ops[k].i))
            }
        }
        return UnsafePointer(ops)
    }
}
