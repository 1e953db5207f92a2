/// Validates a manifest value: unknown keys, wrong types and bad defaults are errors
/// that say which key and what is expected.
struct ManifestParser {
    /// `file:line` of the manifest, prefixed to every message.
    let location: String

    init(where location: String) { self.location = location }

    func fail(_ message: String) -> ManifestError { ManifestError("\(location): manifest: \(message)") }

    func parse(_ value: ScriptValue) throws -> RecipeManifest {
        guard case .object(let fields) = value else { throw fail("recipe { … } must be given a table of named fields") }
        try rejectUnknown(fields, allowed: RecipeManifest.allowedKeys, in: "the manifest")
        guard let name = fields["name"]?.stringValue, !name.isEmpty else {
            throw fail(fields["name"] == nil ? "'name' is required (a short identifier such as \"offboard\")"
                : "'name' must be a non-empty string")
        }
        return RecipeManifest(
            name: name,
            version: try optionalString(fields, "version"),
            description: try optionalString(fields, "description"),
            params: try parseParams(fields["params"]),
            needs: try parseNeeds(fields["needs"]),
            secrets: try parseSecrets(fields["secrets"]),
            targets: try parseTargets(fields["targets"]),
            limits: try parseLimits(fields["limits"]))
    }

    private func rejectUnknown(_ fields: [String: ScriptValue], allowed: [String], in context: String) throws {
        if let unknown = fields.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw fail("unknown key '\(unknown)' in \(context) (allowed: \(allowed.joined(separator: ", ")))")
        }
    }

    private func optionalString(_ fields: [String: ScriptValue], _ key: String, context: String = "") throws -> String? {
        guard let v = fields[key] else { return nil }
        guard let s = v.stringValue else { throw fail("'\(context)\(key)' must be a string, got \(v.luaTypeName)") }
        return s
    }

    private func parseParams(_ value: ScriptValue?) throws -> [ParamSpec] {
        guard let value else { return [] }
        guard case .object(let params) = value else {
            if case .array(let a) = value, a.isEmpty { return [] }
            throw fail("'params' must be a table of name = { type = … }")
        }
        return try params.keys.sorted().map { name in
            guard case .object(let spec) = params[name]! else {
                throw fail("params.\(name) must be a table such as { type = \"string\" }")
            }
            try rejectUnknown(spec, allowed: ParamSpec.allowedKeys, in: "params.\(name)")
            let kinds = ParamSpec.Kind.allCases.map(\.rawValue).joined(separator: ", ")
            guard let typeName = spec["type"]?.stringValue else {
                throw fail("params.\(name).type is required (one of: \(kinds))")
            }
            guard let kind = ParamSpec.Kind(rawValue: typeName) else {
                throw fail("params.\(name).type '\(typeName)' is not a parameter type (one of: \(kinds))")
            }
            var required = false
            if let r = spec["required"] {
                guard case .bool(let b) = r else { throw fail("params.\(name).required must be true or false") }
                required = b
            }
            var defaultValue: ScriptValue?
            if let d = spec["default"] {
                if kind == .file { throw fail("params.\(name): a file parameter cannot have a default") }
                do { defaultValue = try ParamCoercion.coerce(d, to: kind) } catch let e as ParamCoercion.Mismatch {
                    throw fail("params.\(name).default must be \(e.expected), got \(d.luaTypeName)")
                }
            }
            return ParamSpec(name: name, kind: kind, required: required, defaultValue: defaultValue,
                             description: try optionalString(spec, "description", context: "params.\(name)."))
        }
    }

    private func parseNeeds(_ value: ScriptValue?) throws -> [String] {
        guard let value else { return [] }
        if case .object(let o) = value, o.isEmpty { return [] }
        guard case .array(let items) = value else { throw fail("'needs' must be a list of permission keys such as { \"users.manage\" }") }
        return try items.enumerated().map { n, item in
            guard let key = item.stringValue, key.contains("."),
                  key.allSatisfy({ $0.isASCII && ($0.isLowercase || $0 == "." || $0 == "_") })
            else { throw fail("needs[\(n + 1)] must be a permission key such as \"users.manage\"") }
            return key
        }
    }

    private func parseSecrets(_ value: ScriptValue?) throws -> [String] {
        guard let value else { return [] }
        if case .object(let o) = value, o.isEmpty { return [] }
        guard case .array(let items) = value else { throw fail("'secrets' must be a list of vault entry names such as { \"dispatch/ci\" }") }
        var names: [String] = []
        for (n, item) in items.enumerated() {
            guard let name = item.stringValue, RecipeManifest.isSecretName(name) else {
                throw fail("secrets[\(n + 1)] must be a vault entry name such as \"dispatch/ci\" (letters, digits, . _ / -)")
            }
            if !names.contains(name) { names.append(name) }
        }
        return names
    }

    private func parseTargets(_ value: ScriptValue?) throws -> [String] {
        guard let value else { return [] }
        if case .object(let o) = value, o.isEmpty { return [] }
        guard case .array(let items) = value else {
            throw fail("'targets' must be a list of Dispatch target names the configuration defines, such as { \"ops\" }")
        }
        guard items.count <= RecipeManifest.maxTargets else {
            throw fail("'targets' lists \(items.count) targets; a recipe may reach at most \(RecipeManifest.maxTargets)")
        }
        var names: [String] = []
        for (n, item) in items.enumerated() {
            guard let name = item.stringValue, RecipeManifest.isTargetName(name) else {
                throw fail("targets[\(n + 1)] must be a target name such as \"ops\" (letters, digits, _ -; a URL is not a target: the configuration gives each target its URL)")
            }
            if !names.contains(name) { names.append(name) }
        }
        return names
    }

    private func parseLimits(_ value: ScriptValue?) throws -> ManifestLimits {
        var limits = ManifestLimits()
        guard let value else { return limits }
        guard case .object(let fields) = value else { throw fail("'limits' must be a table such as { writes = 100 }") }
        try rejectUnknown(fields, allowed: ManifestLimits.allowedKeys, in: "limits")
        func integer(_ key: String, in range: ClosedRange<Int64>, unit: String) throws -> Int64? {
            guard let v = fields[key] else { return nil }
            guard let i = v.intValue, range.contains(i) else {
                throw fail("limits.\(key) must be an integer from \(range.lowerBound) to \(range.upperBound)\(unit)")
            }
            return i
        }
        let ranges = ManifestLimits.self
        limits.writes = try integer("writes", in: ranges.writesRange, unit: "").map { Int($0) }
        limits.memoryMB = try integer("memory_mb", in: ranges.memoryMBRange, unit: " (MiB)").map { Int($0) }
        limits.instructions = try integer("instructions", in: ranges.instructionsRange, unit: "")
        if let t = fields["timeout"] {
            let range = ranges.timeoutRange
            let seconds: Double? = switch t {
            case .integer(let i): Double(i)
            case .number(let d): d
            default: nil
            }
            guard let seconds, seconds > 0, seconds <= range.upperBound else {
                throw fail("limits.timeout must be a number of seconds above 0 and at most \(Int(range.upperBound))")
            }
            limits.timeoutSeconds = seconds
        }
        return limits
    }
}
