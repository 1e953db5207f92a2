-- Small helpers shared by the shipped recipes: require("lib.util").
local util = {}

-- The error code of a failed pcall: the Hub's `code` ("not_found", "forbidden", …)
-- for a Hub error, "lua_error" for anything else (a bad argument, a bug).
function util.error_code(err)
  if type(err) == "table" and type(err.code) == "string" then return err.code end
  return "lua_error"
end

-- A one-line message for any error value.
function util.error_message(err)
  if type(err) == "table" and type(err.message) == "string" then return err.message end
  return tostring(err)
end

-- Stops the run with a message and no Lua position (for bad parameter values the
-- manifest's types cannot express). Exit code 1; nothing has been written yet.
function util.fail(fmt, ...)
  error(fmt:format(...), 0)
end

-- True for "no value": nil, or json.null (which Hub objects carry for empty fields).
-- json.null is a table, so `if v then` is true for it: test with this (or
-- json.isnull(v), which is true for json.null only).
function util.isnull(v)
  return v == nil or json.isnull(v)
end

-- nil for nil and json.null, the value otherwise.
function util.value(v)
  if util.isnull(v) then return nil end
  return v
end

-- t[k] when t is a table that is not json.null, else nil.
function util.field(t, k)
  if type(t) ~= "table" or json.isnull(t) then return nil end
  return util.value(t[k])
end

-- A lazy iterator that yields fn(item) for every item of `iter` (a hub list or any
-- iterator function); fn may return nil to skip an item. Nothing is collected, so it
-- can feed export.jsonl/export.csv with constant memory.
function util.map(iter, fn)
  return function()
    while true do
      local item = iter()
      if item == nil then return nil end
      local out = fn(item)
      if out ~= nil then return out end
    end
  end
end

-- Trims surrounding white space; nil and "" become nil.
function util.trim(s)
  if s == nil then return nil end
  s = tostring(s):match("^%s*(.-)%s*$")
  if s == "" then return nil end
  return s
end

-- An ISO 8601 / RFC 3339 timestamp as the Hub wants it (UTC, `Z`), or nil and a
-- reason. Accepts "2026-11-01" (midnight UTC), "2026-11-01T08:30:00Z", fractions of a
-- second and numeric offsets ("…+02:00", converted to UTC); a space instead of the
-- "T" is allowed. Dates must exist (no 2026-02-29). Uses the time module.
function util.timestamp(s)
  s = util.trim(s)
  if s == nil then return nil, "empty" end
  if s:match("^%d%d%d%d%-%d%d%-%d%d$") then s = s .. "T00:00:00Z" end
  s = s:gsub("^(%d%d%d%d%-%d%d%-%d%d) ", "%1T")
  local ok, epoch = pcall(time.parse, s)
  if not ok then return nil, "YYYY-MM-DD or YYYY-MM-DDThh:mm:ss with Z or ±hh:mm, a real date and time" end
  return time.format(epoch)
end

-- How many items an iterator yields (a hub list, csv.rows(…), or any iterator
-- function); reads it to the end. Hub lists also have :count().
function util.count(iter)
  local n = 0
  for _ in iter do n = n + 1 end
  return n
end

-- An iterator over lists of up to `size` consecutive items of `iter`, e.g. to send
-- ids in batches: `for batch in util.chunk(hub.users.list(), 50) do … end`.
function util.chunk(iter, size)
  if math.type(size) ~= "integer" or size < 1 then
    error(("util.chunk: size must be a positive integer, got %s"):format(tostring(size)), 2)
  end
  local done = false
  return function()
    if done then return nil end
    local batch = {}
    for item in iter do
      batch[#batch + 1] = item
      if #batch == size then return batch end
    end
    done = true
    if #batch > 0 then return batch end
    return nil
  end
end

-- The keys of a table, sorted (strings and numbers; mixed keys sort by tostring).
function util.keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b)
    if type(a) == type(b) then return a < b end
    return tostring(a) < tostring(b)
  end)
  return keys
end

-- "key value" pairs of a table of counts, sorted by key and joined: `{b=2, a=1}` is
-- "a 1, b 2"; an empty table is "".
function util.counts(t)
  local parts = {}
  for _, k in ipairs(util.keys(t)) do parts[#parts + 1] = ("%s %s"):format(k, tostring(t[k])) end
  return table.concat(parts, ", ")
end

-- Whole days from timestamp `ts` (RFC 3339 string or epoch seconds) to now, rounded
-- down; negative for a future `ts`. Uses the time module.
function util.days_since(ts)
  return time.diff(time.now(), ts) // 86400
end

return util
