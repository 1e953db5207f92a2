import CLua
import Synchronization
import Foundation

/// Errors a binding can throw that become structured Lua error tables.
public protocol ScriptStructuredErrorConvertible: Error {
    var scriptError: ScriptStructuredError { get }
}

/// The limits one state runs under. `0` means "no cap" for every field.
struct VMLimits {
    var memoryBytes: Int
    var instructions: Int64
    /// CLOCK_MONOTONIC seconds (`hs_monotonic_now`), 0 = none.
    var deadline: Double
    var buildBytes: Int
    var hookInterval: Int32 = 1000
}

/// How a protected call into Lua ended.
enum VMCallResult {
    case ok(Int32)                    // number of results left on the stack
    case failed(VMFailure)
}

struct VMFailure {
    enum Kind { case error, limit(Int32) }
    var kind: Kind
    var message: String
    var traceback: String
    /// The structured error table, when the error value was one.
    var structured: ScriptValue?
    /// The recipe's `file:line` where a binding raised a structured error.
    var location: String? = nil
}

/// One sandboxed `lua_State` with its limits and registered Swift functions.
///
/// Confined to the thread that created it. This type and its siblings in `Lua/` are
/// the only Swift code that touches Lua's C API.
final class LuaVM {
    let ctx: UnsafeMutablePointer<hs_ctx>
    let L: OpaquePointer
    @exclusivity(unchecked) private(set) var refs = LuaRefs()
    @exclusivity(unchecked) private var functions: [ScriptFunction] = []
    /// What `invoke` needs per id, in a plain buffer indexed by the id C passes
    /// (`functions` keeps each function alive).
    private struct Entry {
        let gated: Bool
        let function: Unmanaged<ScriptFunction>
    }
    @exclusivity(unchecked) private var entries = UnsafeMutablePointer<Entry>.allocate(capacity: 64)
    @exclusivity(unchecked) private var entryCapacity = 64
    private let qualifiedNames = FunctionNames()
    /// Installed modules not yet built (see `install`).
    private let moduleShelf = ModuleShelf()
    /// The opaque handles bindings gave this state (see `ScriptHandle`).
    private let handles = HandleRegistry()
    /// Function id by object address (`Int`, not `ObjectIdentifier`: a dictionary keyed by
    /// that type costs a protocol-conformance scan when a process first makes one).
    private var ids: [Int: Int] = [:]
    /// One result buffer per binding-call level: a call owns its results until C has
    /// pushed them (a finalizer calling a binding meanwhile gets the next level's).
    private var resultLevels: [ResultOps] = []
    /// `resultLevels[0]`, for the common case without an array access.
    private let topLevelResults = ResultOps()
    /// The arguments of top-level calls into Lua (`call(arguments:)`).
    private let argumentOps = ResultOps()
    /// What the binding being called may build on the Swift side (see `MemoryBudget`).
    private let budget: MemoryBudget
    private let budgetRef: Unmanaged<MemoryBudget>
    private var installRef: Int32 = LUA_NOREF
    private var loadChunkRef: Int32 = LUA_NOREF
    private var loadDataRef: Int32 = LUA_NOREF
    /// Data-only: chunks load with no globals and strings have no methods.
    let dataOnly: Bool
    /// Called before every gated function (capability or write).
    @exclusivity(unchecked) var gate: ((ScriptFunction) throws -> Void)?
    /// The message of a `ScriptLimitError` thrown by a binding.
    @exclusivity(unchecked) private(set) var hostStopMessage: String?
    /// Names of hubscript's own `=name` chunks (the prelude, plugin wrappers), left out
    /// of tracebacks.
    private var internalChunks: Set<String> = [String(Prelude.chunkName.dropFirst())]
    /// Where the last structured error a binding raised came from (see `describeError`).
    private var lastRaise: (code: String, message: String, stack: RecipeStack)?
    /// Where the table error value that ended the current call was raised (by the
    /// recipe's `error{…}` or `assert`, or a binding), read by the message handler.
    private var handlerRaise: RecipeStack?

    enum SetupError: Error, CustomStringConvertible {
        case failed(String)
        var description: String { if case .failed(let m) = self { return m }; return "" }
    }

    init(limits: VMLimits, host: [ScriptFunction], dataOnly: Bool = false) throws {
        self.dataOnly = dataOnly
        let budget = MemoryBudget()
        self.budget = budget
        budgetRef = Unmanaged.passUnretained(budget)
        ctx = .allocate(capacity: 1)
        ctx.initialize(to: hs_ctx())
        ctx.pointee.mem_cap = limits.memoryBytes
        ctx.pointee.mem_grace = 4 << 20
        ctx.pointee.instruction_cap = limits.instructions
        ctx.pointee.hook_interval = limits.hookInterval
        ctx.pointee.deadline = limits.deadline
        ctx.pointee.build_cap = limits.buildBytes
        ctx.pointee.entry = luaVMEntry
        ctx.pointee.on_table_error = luaVMTableError
        guard let state = hs_newstate(ctx) else {
            ctx.deallocate()
            throw SetupError.failed("cannot create a Lua state (out of memory)")
        }
        L = state
        Self.installInterruptHandler
        hs_bind_thread(ctx)
        ctx.pointee.host = Unmanaged.passUnretained(self).toOpaque()
        argumentOps.registerFunction = { [unowned self] in self.registerValue($0) }
        argumentOps.registerHandle = { [unowned self] in try self.handles.id(of: $0) }
        configure(topLevelResults)
        resultLevels = [topLevelResults]
        try setUp(host: host)
        hs_install_hook(L)
    }

    /// When set, `deinit` leaves the Lua state (and its context, which the state's
    /// allocator uses) to the process's exit instead of closing it: for a process that
    /// exits right after its one run (`RunConfiguration.leavesLuaStateToExit`).
    var leavesStateToProcessExit = false

    #if DEBUG
    /// States closed by `deinit` in this process: a debug build's count, for the tests
    /// of `leavesStateToProcessExit` (a closed state runs no binding, so nothing a
    /// recipe does can tell). Atomic: states close on the threads that ran them.
    static var statesClosed: Int { closedCount.load(ordering: .relaxed) }
    private static let closedCount = Atomic<Int>(0)
    #endif

    deinit {
        if !leavesStateToProcessExit {
            hs_close(L)
            #if DEBUG
            Self.closedCount.add(1, ordering: .relaxed)
            #endif
        } else {
            ctx.pointee.closed = 1   // no binding runs from it again, whatever happens
        }
        hs_bind_thread(nil)
        if !leavesStateToProcessExit { ctx.deallocate() }
        entries.deinitialize(count: functions.count)
        entries.deallocate()
    }

    /// The signal handler `interrupt(limit:)` relies on, installed once per process.
    private static let installInterruptHandler: Void = { _ = hs_install_interrupt_handler() }()

    /// The thread this state runs on (the one that created it).
    let thread = hs_self()

    /// From any thread: stops the run with the deadline limit at the next instruction.
    /// Callers must not call this after the VM is gone (see `DeadlineInterrupter`).
    func interruptForDeadline() {
        hs_interrupt(ctx, thread, Int32(HS_LIMIT_DEADLINE))
    }

    var limitHit: Int32 { ctx.pointee.limit_hit }
    var memoryPeak: Int { ctx.pointee.mem_peak }
    var instructionsExecuted: Int64 { ctx.pointee.instructions }

    // MARK: Setup

    private func setUp(host: [ScriptFunction]) throws {
        guard (dataOnly ? hs_open_data_sandbox(L) : hs_open_sandbox(L)) == LUA_OK else { throw SetupError.failed("opening the sandbox: \(popMessage())") }
        guard hs_make_handle_meta(L) == LUA_OK else { throw SetupError.failed("making the handles' metatable: \(popMessage())") }
        var hostFunctions = Dictionary(uniqueKeysWithValues: host.map { ($0.name, ScriptValue.function($0)) })
        let shelf = moduleShelf
        // A module's functions are registered when it is built, on its first read, not
        // at install: a run pays only for the modules it uses (docs/performance.md,
        // "Start-up").
        shelf.onBuild = { [unowned self] module, functions, hasWrapper in
            for function in functions { _ = self.register(function, qualifiedName: module + "." + function.name) }
            if hasWrapper { self.internalChunks.insert(module) }
        }
        hostFunctions["load_module"] = .function(ScriptFunction("load_module") { call in
            let name = try call.string(1)
            guard let module = shelf.build(name) else { throw ScriptMessageError("no module '\(name)' to load") }
            return .values([module.raw, module.wrapper.map(ScriptValue.string) ?? .nilValue])
        })
        let hostTable = ScriptValue.object(hostFunctions)
        guard PreludeChunk.load(L, dataOnly: dataOnly) == LUA_OK else {
            throw SetupError.failed("loading the prelude: \(popMessage())")
        }
        switch call(arguments: [hostTable]) {
        case .failed(let f): throw SetupError.failed("running the prelude: \(f.message)")
        case .ok(let n):
            guard n == 6 else { throw SetupError.failed("the prelude returned \(n) values, expected 6") }
            loadDataRef = try popRef()
            loadChunkRef = try popRef()
            installRef = try popRef()
            refs.errorMeta = try popRef()
            refs.arrayMeta = try popRef()
            refs.null = try popRef()
            argumentOps.refs = refs
            topLevelResults.refs = refs
        }
        if dataOnly, hs_strip_string_methods(L) != LUA_OK {
            throw SetupError.failed("preparing a data-only state: \(popMessage())")
        }
    }

    private func popRef() throws -> Int32 {
        var ref: Int32 = LUA_NOREF
        guard hs_ref_top(L, &ref) == LUA_OK else { throw SetupError.failed("registering a value: \(popMessage())") }
        return ref
    }

    /// Registers a function met as a value (a binding's result, an argument): named as
    /// its module's if a plugin lists it (`ModuleShelf.qualifiedName`), else by its name.
    private func registerValue(_ function: ScriptFunction) -> Int {
        register(function, qualifiedName: moduleShelf.qualifiedName(of: function) ?? function.name)
    }

    /// Registers a function for calls from Lua and returns its id (stable per instance).
    /// `qualifiedName` is made only for a function not registered yet.
    func register(_ function: ScriptFunction, qualifiedName: @autoclosure () -> String) -> Int {
        if let id = ids[Int(bitPattern: ObjectIdentifier(function))] { return id }
        functions.append(function)
        qualifiedNames.names.append(qualifiedName())
        let id = functions.count - 1
        if id == entryCapacity {
            let bigger = UnsafeMutablePointer<Entry>.allocate(capacity: entryCapacity * 2)
            bigger.moveInitialize(from: entries, count: id)
            entries.deallocate()
            entries = bigger
            entryCapacity *= 2
        }
        (entries + id).initialize(to: Entry(gated: function.isGated,
                                            function: Unmanaged.passUnretained(function)))
        ids[Int(bitPattern: ObjectIdentifier(function))] = id
        return id
    }

    /// Installs plugins as globals of every recipe environment. Each module's table is
    /// built, its functions registered (so errors name them `module.function`) and its
    /// wrapper run on the recipe's first read of that global (see `Prelude`), inside the
    /// run's limits like anything else the recipe causes.
    func install(_ plugins: [Plugin]) throws {
        var names: [ScriptValue] = []
        for plugin in plugins {
            moduleShelf.put(plugin)
            names.append(.string(plugin.module))
        }
        pushRef(installRef)
        if case .failed(let f) = call(arguments: [.array(names)]) {
            throw SetupError.failed("installing plugins: \(f.message)")
        }
    }

    // MARK: Loading and calling

    /// Loads a text chunk with a fresh strict environment.
    /// On success the function is left on the stack; on failure returns the message.
    func loadChunk(source: String, chunkName: String) -> String? {
        pushRef(dataOnly ? loadDataRef : loadChunkRef)
        switch call(arguments: [.string(source), .string(chunkName)]) {
        case .failed(let f): return f.message
        case .ok(let n):
            // load_chunk returns fn | nil, message
            if n >= 1 && lua_type(L, -n) == LUA_TFUNCTION {
                if n > 1 { lua_settop(L, -n) }
                return nil
            }
            let message = n >= 2 && lua_type(L, -1) == LUA_TSTRING ? stringAt(-1) : "cannot load \(chunkName)"
            lua_settop(L, -(n + 1))
            return message
        }
    }

    /// Loads and runs a chunk that returns one data value, and converts that value.
    /// Throws the load or runtime message (a limit reads as "limit exceeded").
    func evaluate(source: String, chunkName: String) throws -> ScriptValue {
        if let message = loadChunk(source: source, chunkName: chunkName) { throw ScriptMessageError(message) }
        switch call(arguments: []) {
        case .failed(let f):
            if case .limit(let code) = f.kind {
                let what = chunkName.dropFirst()
                switch code {
                case Int32(HS_LIMIT_MEMORY):
                    throw ScriptMessageError("\(what): uses more than \(ctx.pointee.mem_cap >> 20) MiB while evaluating; it must be plain data")
                case Int32(HS_LIMIT_DEADLINE):
                    throw ScriptMessageError("\(what): takes too long to evaluate (time limit); it must be plain data")
                default:
                    throw ScriptMessageError("\(what): runs more than \(ctx.pointee.instruction_cap) instructions while evaluating; it must be plain data")
                }
            }
            throw ScriptMessageError(f.message)
        case .ok(let n):
            defer { lua_settop(L, -(n + 1)) }
            guard n >= 1 else { return .nilValue }
            var reader = LuaValueReader(state: L, refs: refs, handles: handles)
            do { return try reader.read(-n, depth: 0) } catch let e as LuaValueReader.Failure {
                throw ScriptMessageError(e.message)
            }
        }
    }

    /// Calls the function at the top of the stack under `lua_pcall` with a traceback
    /// handler. stack: …, function -> …, results (ok) | … (failed)
    func call(arguments: [ScriptValue]) -> VMCallResult {
        let base = lua_gettop(L) - 1
        argumentOps.reset()
        do {
            for argument in arguments { try argumentOps.push(argument) }
        } catch {   // argumentOps has no budget: cannot happen, but never trap
            argumentOps.reset()
            return .failed(VMFailure(kind: .error, message: "hubscript: cannot build the arguments: \(error)",
                                     traceback: "", structured: nil))
        }
        let ops = argumentOps.finish()
        handlerRaise = nil
        let status = hs_pcall_ops(L, ops, Int32(argumentOps.opCount), Int32(arguments.count),
                                  Int32(argumentOps.stackNeed))
        argumentOps.reset()
        // A limit hit stops the run even if the recipe's pcall swallowed it just
        // before the chunk returned.
        if status == LUA_OK && limitHit == 0 { return .ok(lua_gettop(L) - base) }
        let failure = describeError(status: status)
        lua_settop(L, base)
        return .failed(failure)
    }

    /// The largest error table the host reads to show it (estimated as bindings charge).
    static let maxErrorObjectBytes = 1 << 20

    private func describeError(status: Int32) -> VMFailure {
        if limitHit != 0 {
            return VMFailure(kind: .limit(limitHit), message: hostStopMessage ?? "", traceback: "", structured: nil)
        }
        if lua_type(L, -1) == LUA_TSTRING {
            let full = stringAt(-1)
            let parts = full.split(separator: "\nstack traceback:", maxSplits: 1)
            let message = parts.first.map(String.init) ?? full
            let traceback = parts.count > 1
                ? RecipeStack.filter(traceback: "stack traceback:" + parts[1], internalChunks: internalChunks) : ""
            return VMFailure(kind: .error, message: ShownText.cut(message), traceback: traceback, structured: nil)
        }
        if status == LUA_ERRMEM && lua_type(L, -1) != LUA_TTABLE {
            return VMFailure(kind: .error, message: "not enough memory", traceback: "", structured: nil)
        }
        guard lua_type(L, -1) == LUA_TTABLE else {
            let type = String(cString: lua_typename(L, lua_type(L, -1)))
            return VMFailure(kind: .error, message: "(error object is a \(type) value)", traceback: "", structured: nil)
        }
        // A table: read under a budget of its own (the recipe made it; the run is over).
        let errorBudget = MemoryBudget()
        errorBudget.reset(to: Self.maxErrorObjectBytes)
        var reader = LuaValueReader(state: L, refs: refs, budget: errorBudget, handles: handles)
        let value: ScriptValue
        do { value = try reader.read(-1, depth: 0) } catch let e as LuaValueReader.Failure {
            return VMFailure(kind: .error, message: "error object: a table that cannot be shown as JSON (\(e.message))",
                             traceback: "", structured: nil)
        } catch {
            return VMFailure(kind: .error, message: "error object: a table too large to show (over \(Self.maxErrorObjectBytes >> 20) MiB)",
                             traceback: "", structured: nil)
        }
        // A binding's structured error, or error({ code = …, message = … }), reads as
        // "code: message"; any other table is shown as JSON. The table a binding raised
        // keeps the recipe's position (matched by code and message: a recipe that
        // catches and re-raises it keeps the original position); any other keeps where
        // the recipe raised it (`error`, `assert`), as the message handler read it.
        let code = value["code"].stringValue.map { "\(ShownText.cut($0)): " } ?? ""
        let raise = lastRaise.flatMap {
            $0.code == value["code"].stringValue && $0.message == value["message"].stringValue ? $0.stack : nil
        } ?? handlerRaise
        if let message = value["message"].stringValue {
            return VMFailure(kind: .error, message: code + ShownText.cut(message), traceback: raise?.traceback ?? "",
                             structured: value, location: raise?.location)
        }
        if refs.hasMetatable(refs.errorMeta, index: -1, in: L) {
            return VMFailure(kind: .error, message: code + "error", traceback: raise?.traceback ?? "",
                             structured: value, location: raise?.location)
        }
        if let json = try? JSONCodec.encode(value) {
            return VMFailure(kind: .error, message: "error object: \(ShownText.cut(json))", traceback: raise?.traceback ?? "",
                             structured: value, location: raise?.location)
        }
        return VMFailure(kind: .error, message: "error object: a table", traceback: "", structured: nil)
    }

    func pushRef(_ ref: Int32) {
        _ = lua_checkstack(L, 1)
        hs_push_ref(L, ref)
    }

    private func stringAt(_ index: Int32) -> String {
        var len = 0
        guard let p = lua_tolstring(L, index, &len) else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: p, count: len), as: UTF8.self)
    }

    private func popMessage() -> String {
        let message = lua_type(L, -1) == LUA_TSTRING ? stringAt(-1) : "unknown error"
        lua_settop(L, -2)
        return message
    }

    // MARK: Calls from Lua

    /// Sets the budget of a call at `depth`: the memory cap, less the buffers of outer
    /// calls whose results are still being pushed. Lua's own memory is capped apart
    /// (by the allocator, which can collect garbage first; the Swift side cannot), so
    /// a run holds at most the cap in Lua plus the cap in Swift at any moment.
    @inline(__always)
    private func resetBudget(depth: Int) {
        let cap = ctx.pointee.mem_cap
        guard cap != 0 else { return budget.reset(to: .max) }
        var lent = 0
        for level in 0..<depth { lent += resultLevels[level].allocatedBytes }
        budget.reset(to: lent >= cap ? 0 : cap - lent)
    }

    /// Makes the buffer of the next binding-call level (the first time a finalizer
    /// calls a binding during a push at that level).
    private func addResultLevel() {
        let ops = ResultOps()
        configure(ops)
        resultLevels.append(ops)
    }

    /// The result buffer of call level `depth` (> 0), made on first use.
    private func resultLevel(_ depth: Int) -> ResultOps {
        while depth >= resultLevels.count { addResultLevel() }
        return resultLevels[depth]
    }

    private func configure(_ ops: ResultOps) {
        ops.refs = refs
        ops.budget = budget
        ops.registerFunction = { [unowned self] in self.registerValue($0) }
        ops.registerHandle = { [unowned self] in try self.handles.id(of: $0) }
    }

    /// Runs function `id` for the trampoline at call level `depth` (see `hs_entry_fn`
    /// for the contract): its results go to that level's buffer, which stays untouched
    /// until C has pushed them.
    fileprivate func invoke(_ state: OpaquePointer, _ id: Int, depth: Int) -> Int32 {
        // A let property (or the level array's element) is passed +0: no retain on the
        // hot path.
        depth == 0 ? invoke(state, id, depth: 0, results: topLevelResults)
                   : invoke(state, id, depth: depth, results: resultLevel(depth))
    }

    /// The message handler met a table error value: remembers where it was raised (the
    /// stack is read before Lua unwinds it; see `hs_raise_fn`).
    fileprivate func noteTableError(_ state: OpaquePointer) {
        handlerRaise = RecipeStack.captureInHandler(state, internalChunks: internalChunks)
    }

    /// Remembers the recipe position of a structured error a binding is raising (the
    /// error path only: the stack is read before Lua unwinds it).
    private func recordRaise(_ error: ScriptStructuredError, state: OpaquePointer, id: Int) {
        let stack = RecipeStack.capture(state, bindingName: qualifiedNames.names[id], internalChunks: internalChunks)
        lastRaise = (error.code, error.message, stack)
    }

    @inline(__always)
    private func invoke(_ state: OpaquePointer, _ id: Int, depth: Int, results: ResultOps) -> Int32 {
        let entry = entries + id
        results.reset()
        resetBudget(depth: depth)
        let callArgs = BindingCall(state: state, refs: refs, names: Unmanaged.passUnretained(qualifiedNames), id: id,
                                   budget: budgetRef, handles: Unmanaged.passUnretained(handles))
        var count: Int32 = 0
        do {
            if entry.pointee.gated, let gate { try gate(entry.pointee.function.takeUnretainedValue()) }
            switch try entry.pointee.function.takeUnretainedValue().body(callArgs) {
            case .none: break
            // One scalar goes back in the context, not through result ops (HS_DIRECT_RESULT).
            case .value(.integer(let i)): return direct(Int32(HS_OP_INT), i: lua_Integer(i))
            case .value(.number(let d)): return direct(Int32(HS_OP_NUM), d: d)
            case .value(.bool(let b)): return direct(Int32(HS_OP_BOOL), i: b ? 1 : 0)
            case .value(.nilValue): return direct(Int32(HS_OP_NIL))
            case .value(let v): try results.push(v); count = 1
            case .values(let vs): for v in vs { try results.push(v) }; count = Int32(vs.count)
            }
        } catch {
            results.reset()
            budget.reset(to: .max)   // the error value itself is small and must be built
            switch error {
            case let e as ScriptLimitError:
                hostStopMessage = e.message
                ctx.pointee.limit_hit = Int32(HS_LIMIT_HOST)
                try? results.pushString(e.message)
            case is ScriptMemoryLimitError:
                if ctx.pointee.limit_hit == 0 { ctx.pointee.limit_hit = Int32(HS_LIMIT_MEMORY) }
                try? results.pushString("not enough memory")
            case let e as ScriptStructuredError:
                recordRaise(e, state: state, id: id)
                try? results.pushStructuredError(e)
            case let e as ScriptStructuredErrorConvertible:
                let structured = e.scriptError
                recordRaise(structured, state: state, id: id)
                try? results.pushStructuredError(structured)
            case let e as ScriptMessageError: try? results.pushString(e.message)
            default: try? results.pushString(String(describing: error))
            }
            count = -1
        }
        ctx.pointee.ops = results.finish()
        ctx.pointee.nops = Int32(results.opCount)
        ctx.pointee.stack_need = Int32(results.stackNeed)
        return count
    }

    @inline(__always)
    private func direct(_ kind: Int32, i: lua_Integer = 0, d: Double = 0) -> Int32 {
        ctx.pointee.direct_kind = kind
        ctx.pointee.direct_i = i
        ctx.pointee.direct_d = d
        return Int32(HS_DIRECT_RESULT)
    }
}

/// The message handler's call for a table error value (see `hs_raise_fn`).
private let luaVMTableError: hs_raise_fn = { state, host in
    Unmanaged<LuaVM>.fromOpaque(host!).takeUnretainedValue().noteTableError(state!)
}

/// The C entry point every trampoline calls (see `hs_entry_fn`).
private let luaVMEntry: hs_entry_fn = { state, host, id, depth in
    Unmanaged<LuaVM>.fromOpaque(host!).takeUnretainedValue().invoke(state!, Int(id), depth: Int(depth))
}
