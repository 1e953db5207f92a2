/// The syntax tree of a Lua 5.4 chunk, with the positions the checker reports.

/// A name as written, and where.
public struct LuaName: Sendable, Equatable {
    public let name: String
    public let position: SourcePosition
}

/// A local a `local` statement declares, with its attribute (`const`, `close`) if any.
public struct LuaLocalName: Sendable, Equatable {
    public let name: LuaName
    public let attribute: String?
}

public indirect enum LuaExpression: Sendable {
    case `nil`(SourcePosition)
    case boolean(Bool, SourcePosition)
    case number(String, SourcePosition)
    case string(String, SourcePosition)
    case vararg(SourcePosition)
    case function(LuaFunctionBody)
    case table([LuaTableField], SourcePosition)
    /// A name: a local, an upvalue or a global, as the resolver decides.
    case name(LuaName)
    /// `object[key]`
    case index(LuaExpression, key: LuaExpression, SourcePosition)
    /// `object.field` (the position is the field name's)
    case field(LuaExpression, LuaName)
    /// `callee(arguments)`, `callee{…}`, `callee"…"` (the position is the opening token's)
    case call(LuaExpression, [LuaExpression], SourcePosition)
    /// `object:method(arguments)`
    case methodCall(LuaExpression, LuaName, [LuaExpression], SourcePosition)
    case binary(String, LuaExpression, LuaExpression, SourcePosition)
    case unary(String, LuaExpression, SourcePosition)
    /// `(e)`: one value of `e`.
    case parenthesized(LuaExpression, SourcePosition)

    /// Where the expression starts.
    public var position: SourcePosition {
        switch self {
        case .nil(let p), .boolean(_, let p), .number(_, let p), .string(_, let p), .vararg(let p), .table(_, let p),
             .unary(_, _, let p), .parenthesized(_, let p):
            return p
        case .function(let body): return body.position
        case .name(let n): return n.position
        case .index(let object, _, _), .field(let object, _), .call(let object, _, _), .methodCall(let object, _, _, _),
             .binary(_, let object, _, _):
            return object.position
        }
    }

    /// Whether the expression may yield several values (a call or `...` last in a list).
    public var isMultiValued: Bool {
        switch self {
        case .call, .methodCall, .vararg: return true
        default: return false
        }
    }
}

public enum LuaTableField: Sendable {
    /// `[key] = value`
    case keyed(LuaExpression, LuaExpression)
    /// `name = value`
    case named(LuaName, LuaExpression)
    /// `value`
    case positional(LuaExpression)
}

public struct LuaFunctionBody: Sendable {
    /// Where `function` is.
    public let position: SourcePosition
    public let parameters: [LuaName]
    public let isVararg: Bool
    /// A method (`function a:b()`) has an implicit first parameter `self`.
    public let isMethod: Bool
    public let body: LuaBlock
}

public struct LuaBlock: Sendable {
    public let statements: [LuaStatement]
}

public indirect enum LuaStatement: Sendable {
    case local([LuaLocalName], [LuaExpression], SourcePosition)
    case assignment([LuaExpression], [LuaExpression], SourcePosition)
    case call(LuaExpression)
    case `do`(LuaBlock)
    case `while`(LuaExpression, LuaBlock)
    case `repeat`(LuaBlock, LuaExpression)
    /// `if c1 then b1 elseif c2 then b2 … else e end`
    case `if`([LuaConditionalBlock], LuaBlock?)
    case numericFor(LuaName, LuaExpression, LuaExpression, LuaExpression?, LuaBlock)
    case genericFor([LuaName], [LuaExpression], LuaBlock)
    /// `function a.b.c()` / `function a.b:c()`: the target is `a`, `a.b.c` as an expression.
    case function(LuaExpression, LuaFunctionBody)
    case localFunction(LuaName, LuaFunctionBody)
    case `return`([LuaExpression], SourcePosition)
    case `break`(SourcePosition)
    case goto(LuaName)
    case label(LuaName)
}

/// A whole chunk: its block runs as a vararg function.
public struct LuaChunk: Sendable {
    public let block: LuaBlock
}

/// One `if` or `elseif` branch.
public struct LuaConditionalBlock: Sendable {
    public let condition: LuaExpression
    public let block: LuaBlock
}
