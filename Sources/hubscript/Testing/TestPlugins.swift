import Foundation
import HubSandbox
import ScriptHost

/// The `test` and `expect` globals of a `*_test.lua` file (docs/recipe-tests.md).
///
/// `test.case(name, fn)` runs `fn` at once under `pcall` and reports the outcome;
/// `test.sandbox{…}` makes a fresh `TestSandbox`, whose `run` executes a recipe through
/// `HubRecipeRun` on a thread of its own (a Lua state is bound to the thread running
/// it, and the test file's state is waiting in the binding meanwhile).
enum TestPlugins {
    static func make(session: TestSession) -> [Plugin] {
        [Plugin(module: "test", summary: "Recipe tests: test.case, test.sandbox.", functions: functions(session),
                luaWrapper: testLua),
         Plugin(module: "expect", summary: "expect(value).to_be(…) and other assertions.", luaWrapper: expectLua)]
    }

    static func functions(_ session: TestSession) -> [ScriptFunction] {
        [
            ScriptFunction("report") { call in
                let ok = try call.boolean(2)
                session.report(name: try call.string(1), ok: ok, message: ok ? nil : try call.optionalString(3) ?? "error")
                return .none
            },
            ScriptFunction("sandbox") { call in
                let options = try call.optionalTable(1)
                return .value(.integer(Int64(try session.newSandbox(options))))
            },
            ScriptFunction("run") { call in
                let sandbox = try session.sandbox(try call.integer(1))
                let path = try session.paths.recipe(try call.string(2))
                let params = try TestSandbox.resolvingFileParams(try Self.object(try call.optionalTable(3), what: "params"),
                                                                 recipe: path, paths: session.paths)
                let options = try call.optionalTable(4)
                var run = TestSandbox.RunOptions()
                run.mode = options["mode"].stringValue ?? "run"
                run.killAfterWrites = try Self.killCount(options, "kill_after_writes", meaning: "the writes made before the kill")
                run.killDuringWrite = try Self.killDuringWrite(options)
                run.planRunID = options["plan"]["run_id"].stringValue
                return .value(try onOwnThread { [run] in try sandbox.run(path: path, params: params, options: run) })
            },
            ScriptFunction("resume") { call in
                let sandbox = try session.sandbox(try call.integer(1))
                let id = try call.string(2)
                guard let record = try sandbox.journal.run(id: id) else {
                    throw ScriptMessageError("s:resume: no run \(id) in this sandbox's journal")
                }
                let params = try Self.object(try JSONCodec.decode(record.paramsJSON), what: "params")
                var run = TestSandbox.RunOptions()
                run.resume = id
                return .value(try onOwnThread { [run] in try sandbox.run(path: record.recipePath, params: params, options: run) })
            },
            ScriptFunction("get") { call in
                .value(try session.sandbox(try call.integer(1)).get(try call.string(2)))
            },
            ScriptFunction("list") { call in
                let query = try Self.object(try call.optionalTable(3), what: "query").sorted { $0.key < $1.key }.map { field in
                    (field.key, try Self.text(field.value, what: "query.\(field.key)"))
                }
                return .value(try session.sandbox(try call.integer(1)).list(try call.string(2), query: query))
            },
            ScriptFunction("vault_names") { call in
                .value(.array(try session.sandbox(try call.integer(1)).secrets.names.map(ScriptValue.string)))
            },
            ScriptFunction("secret_works") { call in
                .value(.bool(try session.sandbox(try call.integer(1)).secretWorks(try call.string(2))))
            },
            ScriptFunction("dispatch_sent") { call in
                .value(try session.sandbox(try call.integer(1)).dispatchSent())
            },
        ]
    }

    /// `options.kill_during_write`: nil when absent; else a whole number from 1 (the write
    /// whose response is lost), and not with `kill_after_writes` (two different kills).
    static func killDuringWrite(_ options: ScriptValue) throws -> Int? {
        guard let n = try killCount(options, "kill_during_write", meaning: "the write whose response is lost") else { return nil }
        if case .nilValue = options["kill_after_writes"] { return n }
        throw ScriptMessageError("s:run: give kill_after_writes (a kill between writes) or kill_during_write (a kill during one), not both")
    }

    /// `options[name]`: nil when absent; else a whole number from 1 to 2^31-1 (`meaning`
    /// says what it counts). Zero, negative, fractional and non-number values are
    /// refused: a kill that never happens would let the test pass for the wrong reason.
    static func killCount(_ options: ScriptValue, _ name: String, meaning: String) throws -> Int? {
        let value = options[name]
        if case .nilValue = value { return nil }
        switch value {
        case .integer(let n) where n >= 1 && n <= Int64(Int32.max): return Int(n)
        case .number(let d) where d == d.rounded() && d >= 1 && d <= Double(Int32.max): return Int(d)   // 2.0, as Lua converts it
        default: break
        }
        let shown: String
        switch value {
        case .integer(let i): shown = String(i)
        case .number(let d): shown = d.isFinite && d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d)
        default: shown = "a " + value.luaTypeName
        }
        throw ScriptMessageError("s:run: \(name) must be a whole number from 1 (\(meaning)), got \(shown)")
    }

    /// A table of named fields (an empty Lua table reads as either kind).
    static func object(_ value: ScriptValue, what: String) throws -> [String: ScriptValue] {
        switch value {
        case .nilValue: return [:]
        case .object(let fields): return fields
        case .array(let items) where items.isEmpty: return [:]
        default: throw ScriptMessageError("\(what) must be a table of named fields")
        }
    }

    /// A scalar as text (fixture fields, query values); a list joins with commas.
    static func text(_ value: ScriptValue, what: String) throws -> String {
        switch value {
        case .string(let s): return s
        case .integer(let i): return String(i)
        case .number(let d): return String(d)
        case .bool(let b): return b ? "true" : "false"
        case .array(let items): return try items.map { try text($0, what: what) }.joined(separator: ",")
        default: throw ScriptMessageError("\(what) must be a string, number or boolean, got a \(value.luaTypeName)")
        }
    }

    /// Runs `body` on a new thread with a large stack and waits for it.
    static func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) throws -> T {
        let box = ThreadResult<T>()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            box.result = Result { try body() }
            done.signal()
        }
        thread.stackSize = 16 << 20
        thread.start()
        done.wait()
        return try box.result!.get()
    }

    static let testLua = #"""
    local raw, support = ...
    local type, pcall, error, tostring, setmetatable, rawget = type, pcall, error, tostring, setmetatable, rawget
    local gsub = string.gsub   -- a function, not a method (see Prelude)

    local function message_of(err)
      if type(err) == "table" then
        local code, message = rawget(err, "code"), rawget(err, "message")
        if code ~= nil then return tostring(code) .. ": " .. tostring(message) end
        if message ~= nil then return tostring(message) end
      end
      return tostring(err)
    end

    -- Errors of the bindings point at the test's line, not at this wrapper's (level 3:
    -- the methods below are not tail calls, so their frame is there).
    local function call(f, ...)
      local ok, result = pcall(f, ...)
      if not ok then
        if type(result) == "string" then error((gsub(result, "^test:%d+: ", "")), 3) end
        error(result, 3)
      end
      return result
    end

    local Sandbox = {}
    Sandbox.__index = Sandbox
    function Sandbox:run(path, params, options) local r = call(raw.run, self.id, path, params, options) return r end
    function Sandbox:resume(run_id) local r = call(raw.resume, self.id, run_id) return r end
    function Sandbox:get(path) local r = call(raw.get, self.id, path) return r end
    function Sandbox:list(path, query) local r = call(raw.list, self.id, path, query) return r end
    function Sandbox:dispatch_sent() local r = call(raw.dispatch_sent, self.id) return r end
    function Sandbox:vault_names() local r = call(raw.vault_names, self.id) return r end
    function Sandbox:secret_works(name) local r = call(raw.secret_works, self.id, name) return r end

    return {
      case = function(name, fn)
        if type(name) ~= "string" then
          error("bad argument #1 to 'test.case' (string expected, got " .. type(name) .. ")", 2)
        end
        if type(fn) ~= "function" then
          error("bad argument #2 to 'test.case' (function expected, got " .. type(fn) .. ")", 2)
        end
        local ok, err = pcall(fn)
        raw.report(name, ok, (not ok) and message_of(err) or nil)
      end,
      sandbox = function(options)
        return setmetatable({ id = call(raw.sandbox, options) }, Sandbox)
      end,
    }
    """#

    static let expectLua = #"""
    local raw, support = ...
    local type, error, tostring, pairs, ipairs, rawequal, select =
          type, error, tostring, pairs, ipairs, rawequal, select
    local format, find, match, concat, sort = string.format, string.find, string.match, table.concat, table.sort
    local sub, gmatch = string.sub, string.gmatch   -- functions, not methods (see Prelude)

    local function show(v, depth)
      depth = depth or 0
      if rawequal(v, support.null) then return "json.null" end
      local t = type(v)
      if t == "string" then return format("%q", v) end
      if t ~= "table" then return tostring(v) end
      if depth >= 3 then return "{…}" end
      local parts, n = {}, #v
      for i = 1, n do parts[#parts + 1] = show(v[i], depth + 1) end
      local keys = {}
      for k in pairs(v) do
        if not (type(k) == "number" and k >= 1 and k <= n and k % 1 == 0) then keys[#keys + 1] = k end
      end
      sort(keys, function(a, b) return tostring(a) < tostring(b) end)
      for _, k in ipairs(keys) do
        local key = (type(k) == "string" and match(k, "^[%a_][%w_]*$")) and k or ("[" .. show(k, depth + 1) .. "]")
        parts[#parts + 1] = key .. " = " .. show(v[k], depth + 1)
      end
      local text = "{" .. concat(parts, ", ") .. "}"
      if #text > 300 then text = sub(text, 1, 297) .. "…}" end
      return text
    end

    -- Where a and b first differ ("" for the values themselves), or nil when deep-equal.
    local function difference(a, b, path)
      if rawequal(a, b) then return nil end
      if type(a) ~= "table" or type(b) ~= "table" or rawequal(a, support.null) or rawequal(b, support.null) then
        if a == b then return nil end
        return path
      end
      for k, v in pairs(a) do
        local d = difference(v, b[k], path .. "." .. tostring(k))
        if d then return d end
      end
      for k, v in pairs(b) do
        if a[k] == nil then return path .. "." .. tostring(k) end
      end
      return nil
    end

    local function at(value, path)
      for key in gmatch(path, "[^.]+") do
        if type(value) ~= "table" then return nil end
        local v = value[key]
        if v == nil then
          local i = math.tointeger(tonumber(key))
          if i then v = value[i] end
        end
        value = v
      end
      return value
    end

    -- Level 3: the test's line (1 is fail, 2 the matcher).
    local function fail(message) error(message, 3) end

    local function failure_of(r)
      if type(r) ~= "table" then return nil end
      return r.failure
    end

    return function(actual)
      local e = {}
      function e.to_be(expected)
        if actual ~= expected then fail("expected " .. show(expected) .. ", got " .. show(actual)) end
      end
      function e.to_equal(expected)
        local path = difference(actual, expected, "")
        if path == nil then return end
        if path == "" then fail("expected " .. show(expected) .. ", got " .. show(actual)) end
        fail("values differ at " .. path .. ": expected " .. show(at(expected, path)) .. ", got " .. show(at(actual, path))
             .. "\n  expected " .. show(expected) .. "\n  got      " .. show(actual))
      end
      function e.to_contain(item)
        if type(actual) == "string" then
          if type(item) == "string" and find(actual, item, 1, true) then return end
        elseif type(actual) == "table" then
          for _, v in ipairs(actual) do
            if difference(v, item, "") == nil then return end
          end
        end
        fail("expected " .. show(actual) .. " to contain " .. show(item))
      end
      function e.to_match(pattern)
        if type(actual) == "string" and match(actual, pattern) then return end
        fail("expected " .. show(actual) .. " to match " .. show(pattern))
      end
      function e.to_succeed()
        if type(actual) == "table" and actual.exit_code == 0 then return end
        local f = failure_of(actual)
        fail("expected the run to succeed, got exit code " .. show(type(actual) == "table" and actual.exit_code or actual)
             .. (f and (": " .. tostring(f.message)) or ""))
      end
      function e.to_fail_with(code)
        local f, got
        if type(actual) == "function" then
          local ok, err = pcall(actual)
          if ok then fail("expected an error " .. show(code) .. ", but the function returned normally") end
          if type(err) == "table" and err.code ~= nil then got = err.code else got = tostring(err) end
          if got == code or (type(got) == "string" and type(code) == "string" and find(got, code, 1, true)) then return end
          fail("expected an error " .. show(code) .. ", got " .. show(got))
        end
        f = failure_of(actual)
        if type(actual) ~= "table" or actual.exit_code == nil then
          fail("to_fail_with expects a run result (s:run) or a function, got " .. show(actual))
        end
        if actual.exit_code ~= 0 and f ~= nil and (actual.exit_code == code or f.code == code or f.kind == code) then
          return
        end
        if actual.exit_code == 0 then
          fail("expected the run to fail with " .. show(code) .. ", but it succeeded")
        end
        fail("expected the run to fail with " .. show(code) .. ", got exit code " .. show(actual.exit_code)
             .. ", kind " .. show(f and f.kind) .. ", code " .. show(f and f.code)
             .. (f and ("\n  " .. tostring(f.message)) or ""))
      end
      return e
    end
    """#
}

/// What a thread hands back to the one waiting for it (written before the signal).
private final class ThreadResult<T>: @unchecked Sendable {
    var result: Result<T, Error>?
}
