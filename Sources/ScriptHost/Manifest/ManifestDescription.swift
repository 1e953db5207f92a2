/// Renders a manifest for `hubscript describe`.
public enum ManifestDescription {
    /// The manifest for people. Every value comes from the recipe, so each goes through
    /// `TerminalText` (a description keeps its tabs but not its line breaks): an escape
    /// sequence or `\r` in a description cannot hide or redraw the `Needs:` line.
    public static func text(_ m: RecipeManifest) -> String {
        let f = TerminalText.field
        var out = f(m.name) + (m.version.map { " \(f($0))" } ?? "") + "\n"
        if let d = m.description { out += "  \(TerminalText.line(d))\n" }
        out += "\nParameters:\n"
        if m.params.isEmpty { out += "  (none)\n" }
        let names = m.params.map { f($0.name) }
        let width = names.map(\.count).max() ?? 0
        for (p, name) in zip(m.params, names) {
            var line = "  " + name.padding(toLength: width, withPad: " ", startingAt: 0)
                + "  " + p.kind.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0)
            if p.required { line += "  required" }
            if let d = p.defaultValue { line += "  default \(f((try? JSONCodec.encode(d)) ?? "?"))" }
            if let about = p.description { line += "  — \(TerminalText.line(about))" }
            out += line + "\n"
        }
        out += "\nNeeds: " + (m.needs.isEmpty ? "(no permissions)" : m.needs.map(f).joined(separator: ", ")) + "\n"
        if !m.secrets.isEmpty { out += "Secrets: " + m.secrets.map(f).joined(separator: ", ") + "\n" }
        if !m.targets.isEmpty { out += "Targets: " + m.targets.map(f).joined(separator: ", ") + "\n" }
        var limits: [String] = []
        if let w = m.limits.writes { limits.append("writes \(w)") }
        if let t = m.limits.timeoutSeconds { limits.append("timeout \(ScriptRuntime.formatSeconds(t))") }
        if let mem = m.limits.memoryMB { limits.append("memory \(mem) MiB") }
        if let i = m.limits.instructions { limits.append("instructions \(i)") }
        out += "Limits: " + (limits.isEmpty ? "(defaults)" : limits.joined(separator: ", ")) + "\n"
        return out
    }

    public static func json(_ m: RecipeManifest) -> ScriptValue {
        var params: [String: ScriptValue] = [:]
        for p in m.params {
            var spec: [String: ScriptValue] = ["type": .string(p.kind.rawValue), "required": .bool(p.required)]
            if let d = p.defaultValue { spec["default"] = d }
            if let about = p.description { spec["description"] = .string(about) }
            params[p.name] = .object(spec)
        }
        var limits: [String: ScriptValue] = [:]
        if let w = m.limits.writes { limits["writes"] = .integer(Int64(w)) }
        if let t = m.limits.timeoutSeconds { limits["timeout"] = .number(t) }
        if let mem = m.limits.memoryMB { limits["memory_mb"] = .integer(Int64(mem)) }
        if let i = m.limits.instructions { limits["instructions"] = .integer(i) }
        var out: [String: ScriptValue] = [
            "name": .string(m.name), "params": .object(params),
            "needs": .array(m.needs.map { .string($0) }), "limits": .object(limits),
            "secrets": .array(m.secrets.map { .string($0) }),
            "targets": .array(m.targets.map { .string($0) }),
        ]
        if let v = m.version { out["version"] = .string(v) }
        if let d = m.description { out["description"] = .string(d) }
        return .object(out)
    }
}
