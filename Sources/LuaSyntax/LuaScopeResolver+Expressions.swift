/// The resolver's walk of expressions: paths of fields from a name (`hub.users.list`),
/// uses of globals and locals, and assignments.
extension Walker {
    /// A path of static fields from a name: `a.b["c"].d`, and whether a dynamic index
    /// follows. The keys of dynamic indexes are returned to be walked.
    struct Path {
        var root: LuaName
        var fields: [LuaName] = []
        var isDynamic = false
    }

    /// The path `expression` is, if it is a name followed by fields and indexes.
    static func path(of expression: LuaExpression) -> (Path, dynamicKeys: [LuaExpression])? {
        switch expression {
        case .name(let name):
            return (Path(root: name), [])
        case .field(let object, let field):
            guard let (found, keys) = Self.path(of: object) else { return nil }
            var path = found
            if !path.isDynamic { path.fields.append(field) }
            return (path, keys)
        case .index(let object, let key, _):
            guard var (path, keys) = Self.path(of: object) else { return nil }
            if !path.isDynamic, case .string(let literal, let position) = key {
                path.fields.append(LuaName(name: literal, position: position))
            } else {
                path.isDynamic = true
                keys.append(key)
            }
            return (path, keys)
        default:
            return nil
        }
    }

    /// Walks the parts of an expression `path(of:)` did not cover.
    mutating func objects(of expression: LuaExpression) {
        switch expression {
        case .field(let object, _): objects(of: object)
        case .index(let object, let key, _):
            objects(of: object)
            self.expression(key)
        default:
            self.expression(expression)
        }
    }

    /// The global path `path` names, following aliases; nil if it starts at a plain local.
    func globalPath(_ path: Path) -> LuaGlobalAccess? {
        if let local = lookup(path.root.name) {
            guard let alias = local.alias else { return nil }
            return LuaGlobalAccess(root: alias.root, fields: alias.fields + path.fields, isDynamic: false, use: .read,
                                   visibleLocals: [], assignedLiteral: nil, stringArgument: nil)
        }
        if lookup("_ENV") != nil { return nil }
        return LuaGlobalAccess(root: path.root, fields: path.fields, isDynamic: false, use: .read,
                               visibleLocals: [], assignedLiteral: nil, stringArgument: nil)
    }

    mutating func use(_ path: Path, _ use: LuaGlobalAccess.Use, literal: String? = nil, stringArgument: String? = nil) {
        if let local = lookup(path.root.name) {
            if use != .write || !path.fields.isEmpty || path.isDynamic { local.isRead = true }
            if use == .write && path.fields.isEmpty && !path.isDynamic { local.isReassigned = true }
            if let alias = local.alias, !(use == .write && path.fields.isEmpty) {
                let at = path.root.position
                var access = LuaGlobalAccess(root: LuaName(name: alias.root.name, position: at),
                                             fields: alias.fields.map { LuaName(name: $0.name, position: at) } + path.fields,
                                             isDynamic: path.isDynamic, use: use, visibleLocals: [], assignedLiteral: literal,
                                             stringArgument: stringArgument)
                access.aliasedFields = alias.fields.count
                access.isThroughAlias = true
                aliasUses.append((local, access))
            }
            return
        }
        // Under a local _ENV, free names index that table, not the recipe's globals.
        if lookup("_ENV") != nil { return }
        report.globals.append(LuaGlobalAccess(root: path.root, fields: path.fields, isDynamic: path.isDynamic, use: use,
                                              visibleLocals: knownGlobals.contains(path.root.name) ? [] : visibleLocalNames,
                                              assignedLiteral: literal,
                                              stringArgument: stringArgument))
    }

    mutating func assign(_ target: LuaExpression, literal: String?) {
        guard let (path, keys) = Self.path(of: target) else {
            expression(target)
            return
        }
        for key in keys { expression(key) }
        if path.fields.isEmpty && !path.isDynamic {
            use(path, .write, literal: literal)
        } else if path.isDynamic {
            use(path, .read)
        } else {
            // `a.b = v` reads `a`; the last field is where the value goes.
            use(path, .fieldWrite)
        }
    }

    mutating func expression(_ expression: LuaExpression) {
        switch expression {
        case .nil, .boolean, .number, .string, .vararg:
            break
        case .function(let body):
            function(body)
        case .table(let fields, _):
            for field in fields {
                switch field {
                case .keyed(let key, let value):
                    self.expression(key)
                    self.expression(value)
                case .named(_, let value), .positional(let value):
                    self.expression(value)
                }
            }
        case .name, .field, .index:
            if let (path, keys) = Self.path(of: expression) {
                for key in keys { self.expression(key) }
                use(path, .read)
            } else {
                objects(of: expression)
            }
        case .call(let callee, let arguments, _):
            let open = arguments.last?.isMultiValued ?? false
            if let (path, keys) = Self.path(of: callee) {
                for key in keys { self.expression(key) }
                var literal: String?
                if case .string(let text, _)? = arguments.first { literal = text }
                use(path, .call(arguments: arguments.count, open: open), stringArgument: literal)
            } else {
                self.expression(callee)
            }
            for argument in arguments { self.expression(argument) }
        case .methodCall(let object, let method, let arguments, _):
            let open = arguments.last?.isMultiValued ?? false
            if let (found, keys) = Self.path(of: object) {
                var path = found
                for key in keys { self.expression(key) }
                if !path.isDynamic { path.fields.append(method) }
                use(path, .call(arguments: arguments.count + 1, open: open))
            } else {
                self.expression(object)
            }
            for argument in arguments { self.expression(argument) }
        case .binary(_, let left, let right, _):
            self.expression(left)
            self.expression(right)
        case .unary(_, let operand, _):
            self.expression(operand)
        case .parenthesized(let inner, _):
            self.expression(inner)
        }
    }
}
