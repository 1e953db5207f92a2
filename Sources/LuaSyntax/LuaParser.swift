/// A recursive-descent parser of Lua 5.4 (the grammar of the reference manual, §9),
/// building a `LuaChunk` with positions.
///
/// It is meant for source Lua's own parser has accepted: it accepts every valid Lua
/// 5.4 chunk, and reports the first construct it does not understand as a
/// `LuaSyntaxError` (with less care for wording than Lua's messages).
public struct LuaParser {
    let tokens: [LuaToken]
    var index = 0

    /// Binary operators: (left, right) priorities, as in Lua's lparser.c.
    static let binaryPriority: [String: (Int, Int)] = [
        "or": (1, 1), "and": (2, 2),
        "<": (3, 3), ">": (3, 3), "<=": (3, 3), ">=": (3, 3), "~=": (3, 3), "==": (3, 3),
        "|": (4, 4), "~": (5, 5), "&": (6, 6), "<<": (7, 7), ">>": (7, 7),
        "..": (9, 8), "+": (10, 10), "-": (10, 10),
        "*": (11, 11), "/": (11, 11), "//": (11, 11), "%": (11, 11),
        "^": (14, 13),
    ]
    static let unaryPriority = 12
    /// The longest chain of operators or suffixes one expression may have (`1 + 1 + …`,
    /// `a.b.c…`, `f()()…`). Lua parses such chains without nesting, but their tree nests,
    /// and walking it recurses: a longer chain is refused rather than risk the stack.
    public static let maxChain = 2_000

    public init(tokens: [LuaToken]) {
        self.tokens = tokens
    }

    /// Parses a whole chunk.
    public static func parse(_ source: String) throws -> LuaChunk {
        var parser = LuaParser(tokens: try LuaLexer.tokens(of: source))
        let block = try parser.block()
        guard case .endOfFile = parser.current.kind else { throw parser.unexpected("'<eof>'") }
        return LuaChunk(block: block)
    }

    // MARK: Tokens

    var current: LuaToken { tokens[index] }
    var peekNext: LuaToken { tokens[min(index + 1, tokens.count - 1)] }

    mutating func advance() -> LuaToken {
        let token = tokens[index]
        if index < tokens.count - 1 { index += 1 }
        return token
    }

    func isSymbol(_ s: String) -> Bool {
        if case .symbol(s) = current.kind { return true }
        return false
    }

    func isKeyword(_ k: String) -> Bool {
        if case .keyword(k) = current.kind { return true }
        return false
    }

    mutating func accept(symbol s: String) -> Bool {
        guard isSymbol(s) else { return false }
        _ = advance()
        return true
    }

    mutating func accept(keyword k: String) -> Bool {
        guard isKeyword(k) else { return false }
        _ = advance()
        return true
    }

    mutating func expect(symbol s: String) throws {
        guard accept(symbol: s) else { throw unexpected("'\(s)'") }
    }

    mutating func expect(keyword k: String) throws {
        guard accept(keyword: k) else { throw unexpected("'\(k)'") }
    }

    mutating func name() throws -> LuaName {
        guard case .name(let n) = current.kind else { throw unexpected("a name") }
        return LuaName(name: n, position: advance().position)
    }

    func unexpected(_ expected: String) -> LuaSyntaxError {
        let found: String
        switch current.kind {
        case .name(let n): found = "'\(n)'"
        case .keyword(let k): found = "'\(k)'"
        case .string: found = "a string"
        case .number(let n): found = "'\(n)'"
        case .symbol(let s): found = "'\(s)'"
        case .endOfFile: found = "the end of the file"
        }
        return LuaSyntaxError("\(expected) expected near \(found)", at: current.position)
    }

    // MARK: Blocks and statements

    func blockEnds() -> Bool {
        switch current.kind {
        case .endOfFile: return true
        case .keyword(let k): return k == "end" || k == "else" || k == "elseif" || k == "until"
        default: return false
        }
    }

    mutating func block() throws -> LuaBlock {
        var statements: [LuaStatement] = []
        while !blockEnds() {
            if isKeyword("return") {
                statements.append(try returnStatement())
                break
            }
            if let statement = try statement() { statements.append(statement) }
        }
        return LuaBlock(statements: statements)
    }

    mutating func returnStatement() throws -> LuaStatement {
        let position = advance().position
        var values: [LuaExpression] = []
        if !blockEnds() && !isSymbol(";") { values = try expressionList() }
        _ = accept(symbol: ";")
        guard blockEnds() else { throw unexpected("'<eof>' or the end of the block") }
        return .return(values, position)
    }

    /// One statement, or nil for an empty one (`;`).
    mutating func statement() throws -> LuaStatement? {
        let position = current.position
        switch current.kind {
        case .symbol(";"):
            _ = advance()
            return nil
        case .symbol("::"):
            _ = advance()
            let label = try name()
            try expect(symbol: "::")
            return .label(label)
        case .keyword("break"):
            _ = advance()
            return .break(position)
        case .keyword("goto"):
            _ = advance()
            return .goto(try name())
        case .keyword("do"):
            _ = advance()
            let body = try block()
            try expect(keyword: "end")
            return .do(body)
        case .keyword("while"):
            _ = advance()
            let condition = try expression()
            try expect(keyword: "do")
            let body = try block()
            try expect(keyword: "end")
            return .while(condition, body)
        case .keyword("repeat"):
            _ = advance()
            let body = try block()
            try expect(keyword: "until")
            return .repeat(body, try expression())
        case .keyword("if"):
            return try ifStatement()
        case .keyword("for"):
            return try forStatement()
        case .keyword("function"):
            _ = advance()
            var target = LuaExpression.name(try name())
            var isMethod = false
            while isSymbol(".") || isSymbol(":") {
                isMethod = advance().kind == .symbol(":")
                target = .field(target, try name())
                if isMethod { break }
            }
            return .function(target, try functionBody(at: position, isMethod: isMethod))
        case .keyword("local"):
            _ = advance()
            if accept(keyword: "function") {
                let local = try name()
                return .localFunction(local, try functionBody(at: position, isMethod: false))
            }
            var names: [LuaLocalName] = []
            repeat {
                let local = try name()
                var attribute: String?
                if accept(symbol: "<") {
                    attribute = try name().name
                    try expect(symbol: ">")
                }
                names.append(LuaLocalName(name: local, attribute: attribute))
            } while accept(symbol: ",")
            let values = accept(symbol: "=") ? try expressionList() : []
            return .local(names, values, position)
        default:
            return try expressionStatement()
        }
    }

    mutating func ifStatement() throws -> LuaStatement {
        var branches: [LuaConditionalBlock] = []
        repeat {
            _ = advance()   // `if` or `elseif`
            let condition = try expression()
            try expect(keyword: "then")
            branches.append(LuaConditionalBlock(condition: condition, block: try block()))
        } while isKeyword("elseif")
        var otherwise: LuaBlock?
        if accept(keyword: "else") { otherwise = try block() }
        try expect(keyword: "end")
        return .if(branches, otherwise)
    }

    mutating func forStatement() throws -> LuaStatement {
        _ = advance()
        let first = try name()
        if accept(symbol: "=") {
            let start = try expression()
            try expect(symbol: ",")
            let limit = try expression()
            let step = accept(symbol: ",") ? try expression() : nil
            try expect(keyword: "do")
            let body = try block()
            try expect(keyword: "end")
            return .numericFor(first, start, limit, step, body)
        }
        var names = [first]
        while accept(symbol: ",") { names.append(try name()) }
        try expect(keyword: "in")
        let values = try expressionList()
        try expect(keyword: "do")
        let body = try block()
        try expect(keyword: "end")
        return .genericFor(names, values, body)
    }

    mutating func expressionStatement() throws -> LuaStatement {
        let position = current.position
        let first = try suffixedExpression()
        if isSymbol("=") || isSymbol(",") {
            var targets = [first]
            while accept(symbol: ",") { targets.append(try suffixedExpression()) }
            for target in targets {
                switch target {
                case .name, .index, .field: continue
                default: throw LuaSyntaxError("syntax error: cannot assign to this expression", at: target.position)
                }
            }
            try expect(symbol: "=")
            return .assignment(targets, try expressionList(), position)
        }
        switch first {
        case .call, .methodCall: return .call(first)
        default: throw LuaSyntaxError("syntax error: a statement must be a call or an assignment", at: position)
        }
    }

    mutating func functionBody(at position: SourcePosition, isMethod: Bool) throws -> LuaFunctionBody {
        try expect(symbol: "(")
        var parameters: [LuaName] = []
        var isVararg = false
        if !isSymbol(")") {
            repeat {
                if accept(symbol: "...") { isVararg = true; break }
                parameters.append(try name())
            } while accept(symbol: ",")
        }
        try expect(symbol: ")")
        let body = try block()
        try expect(keyword: "end")
        return LuaFunctionBody(position: position, parameters: parameters, isVararg: isVararg, isMethod: isMethod, body: body)
    }
}
