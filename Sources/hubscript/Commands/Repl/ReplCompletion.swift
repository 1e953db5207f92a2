import ScriptHost

import SystemText

/// The names Tab completes at the repl's prompt: modules and their functions from the
/// binding registry, Lua's globals and libraries, the `:` commands.
enum ReplCompletion {
    /// The names of the modules `plugins` install and of their functions and values.
    static func names(of plugins: [Plugin]) -> [String] {
        var names: [String] = []
        for plugin in plugins {
            names.append(plugin.module)
            for function in plugin.functions { names.append(plugin.module + "." + function.name) }
            for key in plugin.values.keys { names.append(plugin.module + "." + key) }
        }
        return names
    }

    /// What a session can name besides the documented modules: the modules the
    /// documentation builds without (state, vault), the hub helpers written in Lua,
    /// Lua's globals and standard libraries, and the `:` commands.
    static let fixedNames: [String] = {
        var names = ["state.get", "state.set", "vault.secret", "hub.sessions.revoke_all", "json.null", "json.isnull", "json.array"]
        names += ["assert", "error", "ipairs", "next", "pairs", "pcall", "print", "rawequal", "rawget", "rawlen", "rawset",
                  "require", "select", "setmetatable", "getmetatable", "tonumber", "tostring", "type", "xpcall", "load"]
        let libraries: [String: [String]] = [
            "string": ["byte", "char", "find", "format", "gmatch", "gsub", "len", "lower", "match", "rep", "reverse", "sub", "upper"],
            "table": ["concat", "insert", "move", "pack", "remove", "sort", "unpack"],
            "math": ["abs", "ceil", "floor", "fmod", "huge", "max", "maxinteger", "min", "mininteger", "pi", "random", "sqrt",
                     "tointeger", "type"],
            "utf8": ["char", "codepoint", "codes", "len", "offset"],
            "os": ["clock", "date", "time"],
        ]
        for (library, functions) in libraries { names += functions.map { library + "." + $0 } }
        return names + ReplCommandLine.names
    }()

    /// The completion of a session: the documented modules and `fixedNames`.
    static func standard(plugins: [Plugin]) -> NameCompletion {
        NameCompletion(names: names(of: plugins) + fixedNames)
    }
}
