/// The Lua side of the sandbox, run once per state before anything else.
///
/// It receives the internal `host` table (Swift functions the recipe never sees) and
/// returns, in order: the `json.null` sentinel, the array marker metatable, the
/// structured-error metatable, `install(names)`, `load_chunk(source, name)` and
/// `load_data` (in a data-only state, `dataSource`: no globals at all, for manifests and
/// configuration; a recipe state's refuses).
///
/// Modules are published lazily: `install` only notes their names, and the first read
/// of such a global asks the host for the module (`host.load_module(name)` returns its
/// raw table and its Lua wrapper, if any), runs the wrapper and keeps the result. A
/// recipe that never touches `hub` never pays for building it (scripts/bench-runtime,
/// start-up); one that does sees the same module as before, built inside its own limits.
/// Everything a recipe can reach is in `base`, reached through a per-chunk strict
/// `_ENV` whose metatable is locked. The C shim has already removed io, package,
/// debug, dofile, loadfile, string.dump and most of os, and replaced tostring,
/// collectgarbage, string.rep, string.format and table.concat.
enum Prelude {
    static let chunkName = "=hubscript"

    static let source = #"""
local host = ...
local rawload, setmetatable, rawget, error, type, select, tostring, ipairs, pairs =
      load, setmetatable, rawget, error, type, select, tostring, ipairs, pairs
local format, concat = string.format, table.concat

local null = setmetatable({}, {
  __name = "json.null", __tostring = function() return "null" end, __metatable = "json.null",
  __newindex = function() error("json.null cannot be modified", 2) end,
})
local array_mt = { __name = "array" }
local error_mt = {
  __name = "error",
  __tostring = function(e)
    local code, message = rawget(e, "code"), rawget(e, "message")
    if code ~= nil then return tostring(code) .. ": " .. tostring(message) end
    return tostring(message)
  end,
}

local base = {}
for _, name in ipairs{ "assert", "error", "ipairs", "next", "pairs", "pcall", "rawequal", "rawget",
    "rawlen", "rawset", "select", "setmetatable", "getmetatable", "tonumber", "tostring", "type",
    "xpcall", "_VERSION", "collectgarbage", "string", "table", "math", "utf8", "coroutine", "os" } do
  base[name] = _G[name]
end
local support = { null = null, array_mt = array_mt, error_mt = error_mt }
-- The standard libraries as they are now, before any recipe code: a recipe may change the
-- shared `string`, `table`, … tables (string.sub = …), and a module built later, on the
-- recipe's first read, must not run what it put there. Wrappers see these copies, and
-- call string functions as functions, never as methods (a method goes through the shared
-- table).
local pristine = {}
for _, name in ipairs{ "string", "table", "math", "utf8", "coroutine", "os" } do
  local copy = {}
  for k, v in pairs(base[name]) do copy[k] = v end
  pristine[name] = copy
end
local wrapper_env_mt = {
  __index = function(_, key)
    local value = pristine[key]
    if value ~= nil then return value end
    return base[key]
  end,
}
-- Modules installed but not built yet: name -> true (see `install`).
local lazy = {}
local function build_module(name, raw, wrapper)
  if not wrapper then return raw end
  local fn, err = rawload(wrapper, "=" .. name, "t", setmetatable({}, wrapper_env_mt))
  if not fn then error(err, 0) end
  return fn(raw, support)
end
setmetatable(base, {
  __index = function(_, key)
    if lazy[key] then
      -- Marked built only once it is: a build stopped by a limit is not half-published.
      local module = build_module(key, host.load_module(key))
      -- A read of the same module during its build (a finalizer that ran meanwhile)
      -- published one first: every read sees that one table.
      local published = rawget(base, key)
      if published ~= nil then return published end
      lazy[key] = nil
      base[key] = module
      return module
    end
    error(format("recipe attempted to access nonexistent global '%s'", tostring(key)), 2)
  end,
  __metatable = "the recipe environment is locked",
})

local env_mt = {
  __index = base,
  __newindex = function(_, key)
    error(format("recipe attempted to assign to undeclared global '%s' (declare it with 'local')",
      tostring(key)), 2)
  end,
  __metatable = "the recipe environment is locked",
}
local function new_env() return setmetatable({}, env_mt) end

base.load = function(chunk, chunkname, mode, env)
  if mode ~= nil and mode ~= "t" then
    error("load: only text chunks can be loaded in recipes (mode must be 't')", 2)
  end
  if env ~= nil then error("load: a custom environment is not allowed in recipes", 2) end
  local kind = type(chunk)
  if kind ~= "string" and kind ~= "function" then
    error(format("bad argument #1 to 'load' (string expected, got %s)", kind), 2)
  end
  return rawload(chunk, chunkname, "t", new_env())
end

base.print = function(...)
  -- One argument goes as it is: a large string is not copied by concat.
  if select("#", ...) == 1 then host.write_stdout(tostring((...))) return end
  local parts = {}
  for i = 1, select("#", ...) do parts[i] = tostring((select(i, ...))) end
  host.write_stdout(concat(parts, "\t"))
end

-- A standard library's name always means the built-in library, never a file that
-- shares it (a utf8.lua beside the recipe does not shadow utf8).
local loaded, loading = { string = string, table = table, math = math, utf8 = utf8, coroutine = coroutine }, {}
-- Clears a module's "loading" mark however its body ends (an error included), so a
-- failed require can be retried and reports its own error, not a false cycle.
local loading_guard = { __close = function(guard) loading[guard.name] = nil end }
base.require = function(name)
  if type(name) ~= "string" then
    error(format("bad argument #1 to 'require' (string expected, got %s)", type(name)), 2)
  end
  local cached = loaded[name]
  if cached ~= nil then return cached end
  if loading[name] then error(format("require: module '%s' requires itself (a cycle)", name), 2) end
  local found, source, chunkname = pcall(host.module_source, name)
  if not found then error(source, 2) end
  local fn, err = rawload(source, chunkname, "t", new_env())
  if not fn then error(err, 0) end
  loading[name] = true
  local guard <close> = setmetatable({ name = name }, loading_guard)
  local result = fn(name)
  if result == nil then result = true end
  loaded[name] = result
  return result
end

local manifest_seen = false
base.recipe = function(manifest)
  if manifest_seen then error("recipe { … } may appear only once, at the top of the recipe", 2) end
  manifest_seen = true
  return manifest
end

-- A name installed twice is one module: the host keeps the last plugin of that name. A
-- plugin named like a built-in global (os, …) replaces it, as it did when modules were
-- published at once.
local function install(names)
  for _, name in ipairs(names) do
    base[name] = nil
    lazy[name] = true
  end
end

local function load_chunk(source, chunkname)
  return rawload(source, chunkname, "t", new_env())
end

-- Data files (manifests, configuration) are evaluated in data-only states, with
-- `dataSource` below; a recipe state has no use for `load_data`.
local function load_data() error("a recipe state evaluates no data file", 0) end

return null, array_mt, error_mt, install, load_chunk, load_data
"""#

    /// The prelude of a data-only state (manifests, configuration files): only what
    /// `load_data` and reading values need, so such a state starts without compiling the
    /// recipe environment. Returns the same six values; `install` and `load_chunk` refuse.
    /// It runs with the base and string libraries (`hs_open_data_sandbox`); `string` is no
    /// global, and strings lose their methods once it has run.
    static let dataSource = #"""
local setmetatable, error, tostring, rawload = setmetatable, error, tostring, load
local null = setmetatable({}, {
  __name = "json.null", __tostring = function() return "null" end, __metatable = "json.null",
  __newindex = function() error("json.null cannot be modified", 2) end,
})
local array_mt = { __name = "array" }
local error_mt = { __name = "error" }
local function refuse() error("a data-only state runs no recipe", 0) end
local data_env_mt = {
  __index = function(_, key)
    error("only literal values are allowed here (data only), not the global '" .. tostring(key) .. "'", 2)
  end,
  __newindex = function(_, key)
    error("only literal values are allowed here (data only): cannot assign the global '" .. tostring(key) .. "'", 2)
  end,
  __metatable = "locked",
}
local function load_data(source, chunkname)
  return rawload(source, chunkname, "t", setmetatable({}, data_env_mt))
end
return null, array_mt, error_mt, refuse, refuse, load_data
"""#
}
