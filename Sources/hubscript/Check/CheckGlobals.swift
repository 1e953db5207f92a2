import Foundation
import HTTPKit
import SystemText
import HubClient
import ScriptHost
import RunJournal
import RecipeModules
import RecipeCheck

/// The globals a recipe may use, for `hubscript check`: what a run installs, read from
/// the runtime itself. A probe chunk runs in a recipe state with the run's modules and
/// lists every global it can read and every field of every module table (the Lua
/// wrappers' fields included); each function of the binding registry brings its
/// permission and the argument counts its documented signature states.
enum CheckGlobals {
    /// Lua 5.4's own global names (and `recipe`): the probe keeps those the sandbox offers.
    static let luaGlobals = [
        "assert", "collectgarbage", "dofile", "error", "getmetatable", "ipairs", "load", "loadfile", "next", "pairs",
        "pcall", "print", "rawequal", "rawget", "rawlen", "rawset", "require", "select", "setmetatable", "tonumber",
        "tostring", "type", "xpcall", "warn", "_G", "_VERSION", "coroutine", "debug", "io", "math", "os", "package",
        "string", "table", "utf8", "recipe",
    ]

    /// The modules a run installs (`HubRecipeRun`), made with throwaway objects: nothing is called.
    static func plugins() throws -> [Plugin] {
        var plugins = try BuiltinPlugins.documented()
        let client = try HubClient(baseURL: URL(string: "http://localhost")!, credential: .none,
                                   transport: InProcessTransport(handler: { _ in HTTPResponseMessage(status: 503) }))
        let journal = try Journal.inMemory()
        let coordinator = WriteCoordinator(runID: "check", mode: .plan, journal: journal, writeLimit: nil, masking: SecretRedactor())
        let extra = [StatePlugin.make(context: HubRunContext(client: client, writes: coordinator), journal: journal, scope: "check"),
                     VaultPlugin.make(declared: [], secrets: nil)]
        for plugin in extra where !plugins.contains(where: { $0.module == plugin.module }) { plugins.append(plugin) }
        return plugins
    }

    /// The modules of a recipe test's state (`TestRunner`): json, log, time, test, expect.
    static func testPlugins() -> [Plugin] {
        let session = TestSession(file: "check_test.lua", state: StateDirectory(explicit: "/nonexistent"), onResult: { _ in })
        return [JSONPlugin.make(), LogPlugin.make(output: MemoryOutput()), TimePlugin.make()] + TestPlugins.make(session: session)
    }

    /// The globals of a recipe run (or, with `plugins`, of a state with those modules).
    static func make(plugins given: [Plugin]? = nil) throws -> [String: GlobalShape] {
        let plugins = try given ?? plugins()
        let names = luaGlobals + plugins.map(\.module)
        let output = MemoryOutput()
        var configuration = RunConfiguration(output: output)
        configuration.plugins = plugins
        let probe = RecipeFile(displayPath: "=check-probe", url: URL(fileURLWithPath: "/nonexistent/check-probe.lua"),
                               source: probeSource(names))
        if let failure = ScriptRuntime.run(probe, configuration: configuration).failure {
            throw ScriptMessageError("hubscript: could not list the recipe globals: \(failure.message)")
        }
        var functions: [String: CheckedFunction] = [:]
        for plugin in plugins {
            // A module's Lua wrapper may publish its own function under a binding's name,
            // taking other arguments (`export.jsonl(name, f, s, ctl)` as well as `(name,
            // rows)`): the documented signature is trusted only where the recipe calls the
            // binding itself, or through the hub wrapper, which passes every argument on.
            let signaturesHold = plugin.luaWrapper == nil || plugin.module == "hub"
            for function in plugin.functions {
                let qualified = plugin.module + "." + function.name
                functions[qualified] = CheckedFunction(
                    qualifiedName: qualified, capability: function.capability,
                    arity: signaturesHold ? Arity.parse(summary: function.summary, qualifiedName: qualified) : nil)
            }
        }
        var root: [String: GlobalShape] = [:]
        for line in output.lines {
            let parts = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 2 else { continue }
            let path = parts[0].split(separator: ".").map(String.init)
            let shape: GlobalShape
            switch parts[1] {
            case "function": shape = .function(functions[parts[0]])
            case "table": shape = .table([:])
            default: shape = .value
            }
            insert(shape, at: path[...], into: &root)
        }
        // `_ENV` is Lua's own upvalue, not a global of the environment.
        root["_ENV"] = .value
        return root
    }

    private static func insert(_ shape: GlobalShape, at path: ArraySlice<String>, into table: inout [String: GlobalShape]) {
        guard let first = path.first else { return }
        if path.count == 1 {
            if table[first] == nil { table[first] = shape }
            return
        }
        guard case .table(var fields)? = table[first] else { return }
        insert(shape, at: path.dropFirst(), into: &fields)
        table[first] = .table(fields)
    }

    /// Prints `path<TAB>type` for each global in `names` the state can read and, for a
    /// table without a metatable, each field (nested). A table with a metatable is an
    /// open value (its fields may come from `__index`).
    static func probeSource(_ names: [String]) -> String {
        let list = names.map { "\"\($0)\"" }.joined(separator: ", ")
        return """
        local seen = {}
        local emit
        local function walk(prefix, t, depth)
          for k, v in pairs(t) do
            if type(k) == "string" then emit(prefix .. "." .. k, v, depth + 1) end
          end
        end
        -- A table met twice, or too deep, is an open value: no field of it is judged.
        emit = function(path, v, depth)
          local t = type(v)
          if t == "table" and (getmetatable(v) ~= nil or seen[v] or depth > 6) then t = "value" end
          print(path .. "\t" .. t)
          if t == "table" then
            seen[v] = true
            walk(path, v, depth)
          end
        end
        for _, name in ipairs({ \(list) }) do
          local ok, v = pcall(function() return _ENV[name] end)
          if ok and v ~= nil then emit(name, v, 1) end
        end
        """
    }
}
