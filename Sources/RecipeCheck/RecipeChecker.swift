import LuaSyntax
import ScriptHost

/// What the checker knows of the recipe that is being checked: its `needs` and its
/// declared `params` (names, with where each is declared). A module a recipe requires
/// is checked without one: it may serve several recipes, so its calls and parameter
/// reads are judged by none of them.
public struct ManifestFacts: Sendable {
    public let needs: [String]
    public let params: [String]

    public init(needs: [String], params: [String]) {
        self.needs = needs
        self.params = params
    }
}

/// The static analysis of one Lua file of a recipe: undeclared globals (read or
/// written), unknown module fields, calls whose permission `needs` lacks, parameters
/// read but not declared or declared but never read, argument counts the registry
/// states, and unused locals.
///
/// It reports only what is certain from the text: a path through a local alias, a
/// dynamic index or a call's result is not followed.
public struct RecipeChecker: Sendable {
    public let globals: [String: GlobalShape]
    /// Lua's own globals the recipe sandbox does not offer (`io`, `dofile`, …): a use
    /// says so rather than look like a typo.
    public let withheld: Set<String>

    public init(globals: [String: GlobalShape], withheld: Set<String> = []) {
        self.globals = globals
        self.withheld = withheld
    }

    /// The result of checking a file: its findings, in source order, the modules it
    /// requires by a literal name (with where), and the parameters it reads.
    public struct Result: Sendable {
        public var findings: [CheckFinding] = []
        public var requires: [(name: String, position: SourcePosition)] = []
        public var paramsRead: Set<String> = []
        /// True when the file uses `params` as a whole (`pairs(params)`, `params[k]`):
        /// every parameter counts as read.
        public var readsAllParams = false
    }

    /// Checks `chunk` (parsed from the file shown as `file`). With `manifest`, calls
    /// are checked against its `needs` and `params.x` against its params; the unused
    /// parameter warnings are the caller's (a module may read them too).
    public func check(_ chunk: LuaChunk, file: String, manifest: ManifestFacts?) -> Result {
        var result = Result()
        var findings: [CheckFinding] = []
        let scope = LuaScopeResolver.resolve(chunk, knownGlobals: Set(globals.keys))
        func finding(_ position: SourcePosition, _ severity: CheckFinding.Severity, _ code: String, _ message: String) {
            findings.append(CheckFinding(file: file, line: position.line, column: position.column,
                                                severity: severity, code: code, message: message))
        }
        let globalNames = globals.keys.sorted()
        // Fields the file itself adds to a global table (warned about below) exist when read.
        let addedFields = Set(scope.globals.filter { $0.use == .fieldWrite }.map { ([$0.root] + $0.fields).map(\.name).joined(separator: ".") })
        for access in scope.globals {
            let root = access.root.name
            if access.use == .write {
                finding(access.root.position, .error, "global_write", Self.writeMessage(access, known: globals[root] != nil))
                continue
            }
            if case .call(_, _) = access.use, root == "require", access.fields.isEmpty,
               let name = access.stringArgument {
                result.requires.append((name, access.root.position))
            }
            if root == "params", globals[root] != nil {
                checkParams(access, manifest: manifest, result: &result, finding: finding)
                continue
            }
            // An alias of an undeclared global was reported where it was declared.
            if access.isThroughAlias && globals[root] == nil { continue }
            guard var shape = globals[root] else {
                let hint = withheld.contains(root) ? " (Lua has it, the recipe sandbox does not: docs/recipe-sandbox.md)"
                    : DidYouMean.hint(for: root, among: access.visibleLocals + globalNames)
                finding(access.root.position, .error, "undeclared_global", "undeclared global '\(root)'\(hint)")
                continue
            }
            var path = root
            var complete = true
            let assignsLast = access.use == .fieldWrite
            for (i, field) in access.fields.enumerated() {
                if assignsLast && i == access.fields.count - 1 {
                    if case .table = shape {
                        finding(field.position, .warning, "global_field_write",
                                "setting the field '\(field.name)' of '\(path)', a table every module of the run shares (keep the value in a local table instead)")
                    }
                    break
                }
                guard case .table(let fields) = shape else { complete = false; break }
                guard let next = fields[field.name] else {
                    // Judged where the alias was declared.
                    if i < access.aliasedFields || addedFields.contains(path + "." + field.name) { complete = false; break }
                    let hint = DidYouMean.hint(for: field.name, among: shape.visibleFields)
                    finding(field.position, .error, "unknown_field", "unknown field '\(field.name)' in '\(path)'\(hint)")
                    complete = false
                    break
                }
                shape = next
                path += "." + field.name
            }
            guard complete, !access.isDynamic, case .call(let count, let open) = access.use,
                  case .function(let info?) = shape else { continue }
            let position = access.fields.last?.position ?? access.root.position
            if let manifest, let permission = info.capability, !manifest.needs.contains(permission) {
                finding(position, .error, "permission_not_declared",
                        "\(info.qualifiedName) needs '\(permission)', which the manifest's needs does not declare; add \"\(permission)\" to needs")
            }
            if let arity = info.arity, let problem = Self.countProblem(count: count, open: open, arity: arity) {
                finding(position, .error, "argument_count", "\(info.qualifiedName)(\(arity.parameters)) \(problem)")
            }
        }
        for local in scope.unusedLocals {
            finding(local.position, .warning, "unused_local",
                    "unused local '\(local.name)' (remove it, or name it _\(local.name) if it is meant to be unused)")
        }
        result.findings = findings.sorted { ($0.line, $0.column) < ($1.line, $1.column) }
        return result
    }

    static func countProblem(count: Int, open: Bool, arity: Arity) -> String? {
        let given = open ? "at least \(count - 1)" : "\(count)"
        if let maximum = arity.maximum, (open ? count - 1 : count) > maximum {
            return "takes at most \(maximum) argument\(maximum == 1 ? "" : "s"), given \(given)"
        }
        if !open, count < arity.minimum {
            return "takes at least \(arity.minimum) argument\(arity.minimum == 1 ? "" : "s"), given \(count)"
        }
        return nil
    }

    static func writeMessage(_ access: LuaGlobalAccess, known: Bool) -> String {
        let name = access.root.name
        let local = access.assignedLiteral == "function"
            ? "local function \(name)(…) … end" : "local \(name) = \(access.assignedLiteral ?? "…")"
        if known {
            return "assignment to the global '\(name)': a recipe cannot change its globals (use a local: \(local))"
        }
        return "undeclared global '\(name)' (declare it local: \(local))"
    }

    private func checkParams(_ access: LuaGlobalAccess, manifest: ManifestFacts?, result: inout Result,
                             finding: (SourcePosition, CheckFinding.Severity, String, String) -> Void) {
        guard let field = access.fields.first else {
            result.readsAllParams = true
            return
        }
        result.paramsRead.insert(field.name)
        guard let manifest, !manifest.params.contains(field.name) else { return }
        let declared = manifest.params.isEmpty ? "declares no params" : "declares " + manifest.params.sorted().joined(separator: ", ")
        let hint = DidYouMean.hint(for: field.name, among: manifest.params)
        finding(field.position, .error, "unknown_param", "unknown parameter 'params.\(field.name)': the manifest \(declared)\(hint)")
    }
}
