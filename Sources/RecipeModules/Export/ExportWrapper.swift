/// The Lua side of `export`: splits the iterator forms from the options, runs the
/// iteration (Swift never calls back into Lua) and raises errors at the recipe's line.
enum ExportWrapper {
    static let source = #"""
local raw = ...
local type, select, error, getmetatable = type, select, error, getmetatable
local write, finish, write_hub_list = raw._write, raw._finish, raw._write_hub_list
local ipairs_step, next = ipairs({}), next

local function callable(f)
  if type(f) == "function" then return true end
  local mt = type(f) == "table" and getmetatable(f)
  return type(mt) == "table" and mt.__call ~= nil
end

-- Writes every row; returns an error message or nil.
local function pump(h, form, f, s, ctl)
  if form == "list" then
    for i = 1, #f do
      local _, err = write(h, f[i])
      if err then return err end
    end
  elseif form == "triple" then
    for _, row in f, s, ctl do
      local _, err = write(h, row)
      if err then return err end
    end
  else
    for row in f do
      local _, err = write(h, row)
      if err then return err end
    end
  end
end

-- (rows [, options]) | (f, s, ctl [, options]) -> form, f, s, ctl, options | nil, message
local function split(fname, ...)
  local n = select("#", ...)
  local f, a, b, c = ...
  if callable(f) then
    if n >= 3 then return "triple", f, a, b, c end
    if f == ipairs_step or f == next then
      -- ipairs(t)/pairs(t) followed by options: Lua kept only their first value
      return nil, "bad argument #2 to '" .. fname .. "' (ipairs(t) or pairs(t) must be the last argument; "
        .. "to pass options, pass the list itself: " .. fname .. "(name, t, options))"
    end
    return "function", f, nil, nil, a
  elseif type(f) == "table" then
    return "list", f, nil, nil, a
  end
  local got = n == 0 and "no value" or type(f)
  return nil, "bad argument #2 to '" .. fname .. "' (iterator function or list of rows expected, got " .. got .. ")"
end

local function export(fname, open, name, ...)
  local form, f, s, ctl, options = split(fname, ...)
  if not form then return nil, f end
  local h, err = open(name, options)
  if not h then return nil, err end
  -- A hub list not yet started (hub.audit.query{…}) streams its pages straight from
  -- the Hub into a JSONL file, without Lua tables in between.
  local mt = form == "function" and fname == "export.jsonl" and getmetatable(f)
  local streamed = false
  if type(mt) == "table" and mt.__name == "hub.list" and f._page == nil and not f._done then
    local ok, e = write_hub_list(h, f._handle)
    if ok == nil then return nil, e end
    streamed = ok
    if streamed then f._done = true end
  end
  if not streamed then
    err = pump(h, form, f, s, ctl)
    if err then return nil, err end
  end
  return finish(h)
end

return {
  jsonl = function(name, ...)
    local summary, err = export("export.jsonl", raw.jsonl, name, ...)
    if not summary then error(err, 2) end
    return summary
  end,
  csv = function(name, ...)
    local summary, err = export("export.csv", raw.csv, name, ...)
    if not summary then error(err, 2) end
    return summary
  end,
}
"""#
}
