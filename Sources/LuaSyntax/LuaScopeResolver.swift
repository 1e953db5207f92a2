/// Resolves every name of a chunk to a local (or upvalue) or a global, as Lua does:
/// a `local` is visible from the statement after its declaration to the end of its
/// block (`local function f` inside its own body too), parameters and loop variables in
/// their bodies, a `repeat` block's locals in its `until` condition. A chunk whose
/// `_ENV` is a declared local has no globals where that local is visible.
///
/// The report lists each use of a global with the field path that follows it, so a
/// checker can tell `hub.users.lst` from `hub.users.list` and count a call's arguments.
public struct LuaScopeReport: Sendable {
    /// Every use of a global name, in source order.
    public var globals: [LuaGlobalAccess] = []
    /// Locals (not parameters or loop variables) that are never read, in source order.
    /// Names starting with `_` are meant to be unused and are not listed.
    public var unusedLocals: [LuaName] = []
    /// Every local declared, in source order (parameters, loop variables and `self` included).
    public var declaredLocals: [LuaName] = []
}

/// One use of a global: `root`, then the static field path after it (`.name` or
/// `["literal"]`), and how the whole path is used.
public struct LuaGlobalAccess: Sendable {
    public enum Use: Sendable, Equatable {
        /// The path's value is read (and perhaps indexed dynamically after `fields`).
        case read
        /// The root itself is assigned (`fields` is empty).
        case write
        /// The last of `fields` is assigned (`string.x = 1`): the path before it is read.
        case fieldWrite
        /// The path is called with `arguments` values; `open` when the last one is a call
        /// or `...`, so that the count is a minimum.
        case call(arguments: Int, open: Bool)
    }

    public let root: LuaName
    public let fields: [LuaName]
    /// True when a non-literal index follows `fields` (`params[name]`): the path goes on,
    /// to somewhere the checker cannot know.
    public let isDynamic: Bool
    public let use: Use
    /// The locals visible where the global is used (for did-you-mean on a typo); empty
    /// for a root among the resolver's `knownGlobals`.
    public let visibleLocals: [String]
    /// For a write of the root: the assigned value when it is a literal (`0`, `"x"`),
    /// or `function` for `function name() … end`; nil otherwise.
    public let assignedLiteral: String?
    /// For a call: its first argument when that is a string literal (`require "lib.util"`).
    public let stringArgument: String?
    /// How many of `fields` come from a local alias (`local users = hub.users` then
    /// `users.list()`: 1); they were judged where the alias was declared, and carry the
    /// position of the use.
    public var aliasedFields = 0
    /// The use is through a local alias (`local s = string` then `s.format`).
    public var isThroughAlias = false
}

public enum LuaScopeResolver {
    /// `knownGlobals`: names whose uses need no list of the locals visible there.
    public static func resolve(_ chunk: LuaChunk, knownGlobals: Set<String> = []) -> LuaScopeReport {
        var walker = Walker()
        walker.knownGlobals = knownGlobals
        walker.push()
        walker.block(chunk.block)
        walker.pop()
        for (local, access) in walker.aliasUses where !local.isReassigned { walker.report.globals.append(access) }
        walker.report.unusedLocals.sort { $0.position < $1.position }
        return walker.report
    }
}

final class LocalVariable {
    let name: LuaName
    let reportsUnused: Bool
    var isRead = false
    /// The global path the local was declared with (`local users = hub.users`), if any.
    var alias: LuaGlobalAccess?
    /// Assigned after its declaration: then it is no alias anywhere (the uses through it
    /// wait in `aliasUses` until the end of the walk to know).
    var isReassigned = false
    init(name: LuaName, reportsUnused: Bool) {
        self.name = name
        self.reportsUnused = reportsUnused
    }
}

struct Walker {
    var report = LuaScopeReport()
    var scopes: [[LocalVariable]] = []
    /// The visible locals by name, innermost last (a name declared again hides the earlier one).
    var visible: [String: [LocalVariable]] = [:]
    var knownGlobals: Set<String> = []
    /// Uses of globals through local aliases, kept if the alias is never reassigned.
    var aliasUses: [(LocalVariable, LuaGlobalAccess)] = []

    mutating func push() { scopes.append([]) }

    mutating func pop() {
        for local in scopes.removeLast() {
            visible[local.name.name]?.removeLast()
            if local.reportsUnused && !local.isRead && !local.name.name.hasPrefix("_") { report.unusedLocals.append(local.name) }
        }
    }

    mutating func declare(_ name: LuaName, reportsUnused: Bool) {
        let local = LocalVariable(name: name, reportsUnused: reportsUnused)
        scopes[scopes.count - 1].append(local)
        visible[name.name, default: []].append(local)
        report.declaredLocals.append(name)
    }

    func lookup(_ name: String) -> LocalVariable? {
        visible[name]?.last
    }

    var visibleLocalNames: [String] {
        var seen = Set<String>()
        var names: [String] = []
        for scope in scopes.reversed() {
            for local in scope.reversed() where seen.insert(local.name.name).inserted { names.append(local.name.name) }
        }
        return names
    }

    // MARK: Statements

    mutating func block(_ block: LuaBlock) {
        for statement in block.statements { self.statement(statement) }
    }

    mutating func scoped(_ body: LuaBlock) {
        push()
        block(body)
        pop()
    }

    mutating func statement(_ statement: LuaStatement) {
        switch statement {
        case .local(let names, let values, _):
            for value in values { expression(value) }
            // What each new local aliases is decided before any is visible (`local hub = hub`).
            let aliases = names.indices.map { i -> LuaGlobalAccess? in
                guard i < values.count, !(i == values.count - 1 && values[i].isMultiValued),
                      let (path, _) = Self.path(of: values[i]), !path.isDynamic else { return nil }
                return globalPath(path)
            }
            for (local, alias) in zip(names, aliases) {
                // A `<close>` variable is used by its scope's end.
                declare(local.name, reportsUnused: local.attribute != "close")
                lookup(local.name.name)?.alias = alias
            }
        case .assignment(let targets, let values, _):
            for value in values { expression(value) }
            let literal = targets.count == 1 && values.count == 1 ? Self.literal(values[0]) : nil
            for target in targets { assign(target, literal: literal) }
        case .call(let call):
            expression(call)
        case .do(let body):
            scoped(body)
        case .while(let condition, let body):
            expression(condition)
            scoped(body)
        case .repeat(let body, let condition):
            push()
            block(body)
            expression(condition)
            pop()
        case .if(let branches, let otherwise):
            for branch in branches {
                expression(branch.condition)
                scoped(branch.block)
            }
            if let otherwise { scoped(otherwise) }
        case .numericFor(let variable, let start, let limit, let step, let body):
            expression(start)
            expression(limit)
            if let step { expression(step) }
            push()
            declare(variable, reportsUnused: false)
            scoped(body)
            pop()
        case .genericFor(let names, let values, let body):
            for value in values { expression(value) }
            push()
            for name in names { declare(name, reportsUnused: false) }
            scoped(body)
            pop()
        case .function(let target, let body):
            assign(target, literal: "function")
            function(body)
        case .localFunction(let name, let body):
            declare(name, reportsUnused: true)
            function(body)
        case .return(let values, _):
            for value in values { expression(value) }
        case .break, .goto, .label:
            break
        }
    }

    static func literal(_ value: LuaExpression) -> String? {
        switch value {
        case .nil: return "nil"
        case .boolean(let b, _): return b ? "true" : "false"
        case .number(let n, _): return n
        case .string(let s, _) where s.count <= 20 && !s.contains(where: { $0 == "\"" || $0 == "\\" || $0.isNewline }):
            return "\"\(s)\""
        case .table(let fields, _) where fields.isEmpty: return "{}"
        case .function: return "function"
        default: return nil
        }
    }

    mutating func function(_ body: LuaFunctionBody) {
        push()
        if body.isMethod { declare(LuaName(name: "self", position: body.position), reportsUnused: false) }
        for parameter in body.parameters { declare(parameter, reportsUnused: false) }
        block(body.body)
        pop()
    }
}
