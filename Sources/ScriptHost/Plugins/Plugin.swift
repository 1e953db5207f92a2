/// A Swift function callable from Lua.
///
/// Identity is the object: two `ScriptFunction`s are equal only if they are the same
/// instance. `capability` names the permission the function needs (nil: none) and
/// `writes` says whether it changes anything outside the run; the host consults both
/// (through `RunConfiguration.gate`) before every call of a gated function.
public final class ScriptFunction: Sendable, Hashable {
    public typealias Body = @Sendable (BindingCall) throws -> ScriptResult

    /// Name within its module, e.g. `encode` or `users.get` (dots make nested tables).
    public let name: String
    public let capability: String?
    public let writes: Bool
    /// One line for the module reference.
    public let summary: String
    public let body: Body

    public init(_ name: String, capability: String? = nil, writes: Bool = false, summary: String = "",
                body: @escaping Body) {
        self.name = name
        self.capability = capability
        self.writes = writes
        self.summary = summary
        self.body = body
    }

    public var isGated: Bool { capability != nil || writes }

    public static func == (lhs: ScriptFunction, rhs: ScriptFunction) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// What a binding returns to Lua.
public enum ScriptResult: Sendable {
    case none
    case value(ScriptValue)
    case values([ScriptValue])
}

/// A Lua module implemented in Swift.
///
/// The host builds a table of `functions` and `values` (dotted names nest), then, if
/// `luaWrapper` is set, runs it as a chunk with `(raw, support)` and publishes what it
/// returns instead. `support` holds `array_mt`, `null` and `error_mt`. Wrappers are
/// where iteration and other Lua-side logic live, so Swift never calls back into Lua.
public struct Plugin: Sendable {
    public let module: String
    public let summary: String
    /// The module's functions (made now, on first use, for a plugin made with `makingFunctions:`).
    public var functions: [ScriptFunction] {
        switch functionList {
        case .made(let list): list
        case .onFirstUse(let box): box.value
        }
    }
    /// The functions if they are made already (never makes them).
    var functionsIfMade: [ScriptFunction]? {
        switch functionList {
        case .made(let list): list
        case .onFirstUse(let box): box.madeValue
        }
    }
    public let values: [String: ScriptValue]
    /// Lua run over the module's raw table when it is built (see above), or nil.
    public var luaWrapper: String? { wrapper() }
    private let functionList: FunctionList
    private let wrapper: @Sendable () -> String?

    private enum FunctionList: Sendable {
        case made([ScriptFunction])
        case onFirstUse(OnFirstUse<[ScriptFunction]>)
    }

    public init(module: String, summary: String = "", functions: [ScriptFunction] = [],
                values: [String: ScriptValue] = [:], luaWrapper: String? = nil) {
        self.module = module
        self.summary = summary
        self.functionList = .made(functions)
        self.values = values
        self.wrapper = { luaWrapper }
    }

    /// A plugin whose functions (and wrapper text) are made when first needed — when a
    /// recipe first reads the module (`ModuleShelf.build`), or a reference lists them —
    /// not when every run starts: a run that never reads `hub` should not make its
    /// dozens of functions and its wrapper text.
    public init(module: String, summary: String = "", makingFunctions: @escaping @Sendable () -> [ScriptFunction],
                values: [String: ScriptValue] = [:], luaWrapper: @escaping @autoclosure @Sendable () -> String? = nil) {
        self.module = module
        self.summary = summary
        self.functionList = .onFirstUse(OnFirstUse(makingFunctions))
        self.values = values
        self.wrapper = luaWrapper
    }
}
