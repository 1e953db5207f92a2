import Foundation
import ScriptHost

/// The recipe a `hubscript eval` or `repl` session runs: a small Lua loop that reads a
/// chunk from the `repl` module, compiles it against the session's variables, runs it
/// and hands its values back to be shown. It runs as any recipe does (the sandbox, the
/// limits, the journal, the gate), so a session can do nothing a recipe could not.
///
/// Lines see the session's variables through their own `_ENV`: `x = 1` keeps `x` for
/// the lines after (as globals do in lua's REPL); a `local` lasts for its chunk. A name
/// the session has not set is looked up as a recipe's globals are (modules, the
/// standard library), and an unknown one is the recipe's "nonexistent global" error.
enum ReplDriver {
    /// The chunk name of the lines: errors read `repl:1: …` or `eval:1: …`.
    static func recipe(folder: URL, mode: ReplSession.Mode) throws -> PreparedRecipe {
        let name = mode == .eval ? "(eval)" : "(repl)"
        let file = RecipeFile(displayPath: name, url: folder.appendingPathComponent(name), source: source)
        return try PreparedRecipe(file: file)
    }

    /// Whether a journalled run's recipe is a session's driver (`(eval)`, `(repl)`).
    static func isSession(recipePath: String) -> Bool {
        ["(eval)", "(repl)"].contains(URL(fileURLWithPath: recipePath).lastPathComponent)
    }

    static let source = #"""
recipe {
  name = "repl",
  description = "The session of hubscript eval and hubscript repl: each chunk read, run, its values shown.",
}

-- The session's own module is the driver's alone: its calls carry the key claimed
-- here, before any line runs, so a line or a module it requires cannot prompt the
-- person (a forged "password:") or read the lines they type next.
local key = repl.claim()
local repl_read, repl_show, repl_fail, repl_stop = repl.read, repl.show, repl.fail, repl.stop
local function read(...) return repl_read(key, ...) end
local function show(...) return repl_show(key, ...) end
local function fail(...) return repl_fail(key, ...) end
local function stop(...) return repl_stop(key, ...) end
local is_eval, max_items, completes = repl.mode == "eval", repl.max_items, repl.completes
local max_chunk_bytes, max_chunk_lines = repl.max_chunk_bytes, repl.max_chunk_lines
local max_show_entries, max_show_bytes = repl.max_show_entries, repl.max_show_bytes
local load, xpcall, type, tostring, getmetatable, rawget, setmetatable, select, pcall, error, pairs, next =
      load, xpcall, type, tostring, getmetatable, rawget, setmetatable, select, pcall, error, pairs, next
local sub, match, sort = string.sub, string.match, table.sort
local chunkname = is_eval and "=eval" or "=repl"

-- The session's variables; what it has not set is looked up as a recipe's globals are.
local session = setmetatable({}, { __index = _ENV })
local prefix = "local _ENV = ...; "

-- As lua.c: a chunk is first tried as an expression (its values are shown), then as
-- statements. The prefix shares the first line, so line numbers stay the user's.
local function compile(text)
  local chunk = load(prefix .. "return " .. text, chunkname)
  if chunk then return chunk end
  return load(prefix .. text, chunkname)
end

-- A chunk cut short: lua.c's test (the message ends at "<eof>").
local function incomplete(message)
  return sub(message, -5) == "<eof>"
end

local function is_list(value)
  local mt = getmetatable(value)
  return type(mt) == "table" and rawget(mt, "__name") == "hub.list"
end

-- A lazy hub list is shown as its next items, at most max_items of them.
local function shown(value)
  if not is_list(value) then return value, false end
  local items, n = json.array({}), 0
  while n < max_items do
    local item = value()
    if item == nil then return items, false end
    n = n + 1
    items[n] = item
  end
  return items, value() ~= nil
end

local function has_function(value)
  for _, v in next, value do
    if type(v) == "function" then return true end
  end
  return false
end

-- A table with functions (a module: hub.users) is shown as its names.
local function names(value)
  local out = {}
  for key, v in next, value do
    if type(key) == "string" then out[#out + 1] = type(v) == "function" and key .. "()" or key end
  end
  sort(out)
  return json.array(out)
end

-- A value shown is copied out of the Lua state (whose memory the session's limit
-- counts) into JSON text (which the limit does not count, and which can be six times
-- the size of the text it escapes), so what is shown is bounded.
local too_large_message = ": it is over " .. max_show_entries .. " table entries or " .. (max_show_bytes // (1 << 20))
  .. " MiB of text, more than is shown; show a part of it (#t, t[1], a for loop), or export it"

local function too_large(value)
  local entries, bytes, seen = 0, 0, {}
  local function walk(v, depth)
    local kind = type(v)
    if kind == "string" then
      bytes = bytes + #v
    elseif kind == "table" and not seen[v] and depth < 200 then
      seen[v] = true
      for k, x in next, v do
        entries = entries + 1
        if type(k) == "string" then bytes = bytes + #k end
        if entries > max_show_entries or bytes > max_show_bytes or walk(x, depth + 1) then return true end
      end
    end
    return bytes > max_show_bytes
  end
  return walk(value, 0)
end

local function show_one(i, value, cut)
  if too_large(value) then
    local message = "cannot show value " .. i .. too_large_message
    if is_eval then error(message, 0) end
    return fail(message)
  end
  local ok, problem = pcall(show, value, cut)
  if ok then return end
  if type(value) ~= "table" then
    show(tostring(value), false)
  elseif has_function(value) then
    show(names(value), false)
  else
    -- Nested too deep, or a cycle: JSON cannot hold it.
    local reason = tostring(problem)
    local message = "cannot show value " .. i .. " as JSON: " .. (match(reason, "^[^\n]-bad argument #%d+ to '[%w.]+' %((.*)%)$") or reason)
    if is_eval then error(message, 0) end
    fail(message)
  end
end

local function show_values(count, ...)
  for i = 1, count do
    local value, cut = shown((select(i, ...)))
    show_one(i, value, cut)
  end
end

-- A line's error as text, taken inside its protected call: an error value whose
-- __tostring fails or is not text must not end the session. (Tables are walked with
-- next, not pairs, for the same reason: a __pairs runs no code of a line's here.)
local function keep(message)
  if type(message) == "string" then return message end
  local ok, text = pcall(tostring, message)
  if ok and type(text) == "string" then return text end
  return "(an error value that cannot be shown as text)"
end

-- What the session has set, and the fields of its tables, for Tab (bounded).
-- A name longer than 100 bytes is not offered: each prompt copies the names out of
-- the Lua state, and no one types such a name.
local function session_names()
  if not completes then return nil end
  local out, n = json.array({}), 0
  for key, value in next, session do
    if type(key) == "string" and #key <= 100 then
      n = n + 1
      out[n] = key
      if type(value) == "table" and not is_list(value) then
        local fields = 0
        for field in next, value do
          if type(field) == "string" and #field <= 100 then
            n, fields = n + 1, fields + 1
            out[n] = key .. "." .. field
            if fields >= 200 then break end
          end
        end
      end
    end
    if n >= 2000 then break end
  end
  return out
end

-- Showing runs a line's code too (a value that calls itself a hub list is called for
-- its items), so it is protected as the line was.
local function report(ok, ...)
  if ok then
    local shown_ok, problem = xpcall(show_values, keep, select("#", ...), ...)
    if not shown_ok then fail(problem) end
    return
  end
  fail((...))
end

if is_eval then
  local text = read("")
  local chunk, message = compile(text)
  if not chunk then error(message, 0) end
  -- An error in the chunk is the run's error (exit code 1), as in a recipe.
  return (function(...) show_values(select("#", ...), ...) end)(chunk(session))
end

-- An unfinished chunk is compiled again at each line, so it is bounded (bytes and
-- lines): a paste that never closes its [[ must not hold the session for hours. Past
-- the bound the session ends: the lines after it, run on their own, would run out of
-- the context they were written in (a write inside an `if` run unconditionally).
local too_long = "an unfinished chunk grew past " .. (max_chunk_bytes // 1024) .. " KiB or "
  .. max_chunk_lines .. " lines; the session ends here, nothing after it ran. Put a long chunk in a file and require it"

while true do
  local text = read("> ", session_names())
  if text == nil then break end
  local chunk, message = compile(text)
  local lines = 1
  while not chunk and incomplete(message) do
    local more = read(">> ")
    if more == nil then break end
    text = text .. "\n" .. more
    lines = lines + 1
    if #text > max_chunk_bytes or lines > max_chunk_lines then stop(too_long) end
    chunk, message = compile(text)
  end
  if chunk then report(xpcall(chunk, keep, session)) else fail(message) end
end
"""#
}
