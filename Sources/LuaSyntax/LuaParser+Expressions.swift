/// Expressions: operators by priority (Lua's `subexpr`), primary and suffixed
/// expressions, call arguments and table constructors.
extension LuaParser {
    mutating func expressionList() throws -> [LuaExpression] {
        var list = [try expression()]
        while accept(symbol: ",") { list.append(try expression()) }
        return list
    }

    mutating func expression(limit: Int = 0) throws -> LuaExpression {
        var left: LuaExpression
        let position = current.position
        if let op = unaryOperator() {
            _ = advance()
            left = .unary(op, try expression(limit: Self.unaryPriority), position)
        } else {
            left = try simpleExpression()
        }
        var chain = 0
        while let op = binaryOperator(), let (leftPriority, rightPriority) = Self.binaryPriority[op], leftPriority > limit {
            chain += 1
            if chain > Self.maxChain { throw LuaSyntaxError("expression too long to analyse (over \(Self.maxChain) operators)", at: current.position) }
            let opPosition = advance().position
            let right = try expression(limit: rightPriority)
            left = .binary(op, left, right, opPosition)
        }
        return left
    }

    func unaryOperator() -> String? {
        switch current.kind {
        case .keyword("not"): return "not"
        case .symbol("-"): return "-"
        case .symbol("#"): return "#"
        case .symbol("~"): return "~"
        default: return nil
        }
    }

    func binaryOperator() -> String? {
        switch current.kind {
        case .keyword("and"): return "and"
        case .keyword("or"): return "or"
        case .symbol(let s) where Self.binaryPriority[s] != nil: return s
        default: return nil
        }
    }

    mutating func simpleExpression() throws -> LuaExpression {
        let token = current
        switch token.kind {
        case .number(let n): _ = advance(); return .number(n, token.position)
        case .string(let s): _ = advance(); return .string(s, token.position)
        case .keyword("nil"): _ = advance(); return .nil(token.position)
        case .keyword("true"): _ = advance(); return .boolean(true, token.position)
        case .keyword("false"): _ = advance(); return .boolean(false, token.position)
        case .symbol("..."): _ = advance(); return .vararg(token.position)
        case .symbol("{"): return try tableConstructor()
        case .keyword("function"):
            _ = advance()
            return .function(try functionBody(at: token.position, isMethod: false))
        default: return try suffixedExpression()
        }
    }

    mutating func primaryExpression() throws -> LuaExpression {
        if case .name = current.kind { return .name(try name()) }
        let position = current.position
        if accept(symbol: "(") {
            let inner = try expression()
            try expect(symbol: ")")
            return .parenthesized(inner, position)
        }
        throw unexpected("an expression")
    }

    mutating func suffixedExpression() throws -> LuaExpression {
        var expression = try primaryExpression()
        var chain = 0
        while true {
            let position = current.position
            chain += 1
            if chain > Self.maxChain { throw LuaSyntaxError("expression too long to analyse (over \(Self.maxChain) fields, indexes or calls)", at: position) }
            switch current.kind {
            case .symbol("."):
                _ = advance()
                expression = .field(expression, try name())
            case .symbol("["):
                _ = advance()
                let key = try self.expression()
                try expect(symbol: "]")
                expression = .index(expression, key: key, position)
            case .symbol(":"):
                _ = advance()
                let method = try name()
                expression = .methodCall(expression, method, try callArguments(), position)
            case .symbol("("), .symbol("{"), .string:
                expression = .call(expression, try callArguments(), position)
            default:
                return expression
            }
        }
    }

    mutating func callArguments() throws -> [LuaExpression] {
        let token = current
        switch token.kind {
        case .string(let s):
            _ = advance()
            return [.string(s, token.position)]
        case .symbol("{"):
            return [try tableConstructor()]
        case .symbol("("):
            _ = advance()
            if accept(symbol: ")") { return [] }
            let list = try expressionList()
            try expect(symbol: ")")
            return list
        default:
            throw unexpected("function arguments")
        }
    }

    mutating func tableConstructor() throws -> LuaExpression {
        let position = current.position
        try expect(symbol: "{")
        var fields: [LuaTableField] = []
        while !isSymbol("}") {
            if isSymbol("[") {
                _ = advance()
                let key = try expression()
                try expect(symbol: "]")
                try expect(symbol: "=")
                fields.append(.keyed(key, try expression()))
            } else if case .name = current.kind, peekNext.kind == .symbol("=") {
                let key = try name()
                _ = advance()
                fields.append(.named(key, try expression()))
            } else {
                fields.append(.positional(try expression()))
            }
            if !accept(symbol: ",") && !accept(symbol: ";") { break }
        }
        try expect(symbol: "}")
        return .table(fields, position)
    }
}
