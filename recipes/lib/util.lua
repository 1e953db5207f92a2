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

-- nil for nil and json.null, the value otherwise (Hub objects carry json.null).
function util.value(v)
  if v == nil or v == json.null then return nil end
  return v
end

-- t[k] when t is a table that is not json.null, else nil.
function util.field(t, k)
  if type(t) ~= "table" or t == json.null then return nil end
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

-- An ISO 8601 / RFC 3339 timestamp as the Hub wants it, or nil and a reason.
-- Accepts "2026-11-01" (midnight UTC), "2026-11-01T08:30:00Z", fractions of a second
-- and numeric offsets ("…+02:00"); a space instead of the "T" is allowed.
function util.timestamp(s)
  s = util.trim(s)
  if s == nil then return nil, "empty" end
  local y, mo, d, rest = s:match("^(%d%d%d%d)%-(%d%d)%-(%d%d)(.*)$")
  if not y then return nil, "not a date (YYYY-MM-DD[Thh:mm:ssZ])" end
  mo, d = tonumber(mo), tonumber(d)
  if mo < 1 or mo > 12 or d < 1 or d > 31 then return nil, "month or day out of range" end
  if rest == "" then return s .. "T00:00:00Z" end
  local h, mi, se, zone = rest:match("^[Tt ](%d%d):(%d%d):(%d%d)(.*)$")
  if not h then return nil, "time must be hh:mm:ss" end
  if tonumber(h) > 23 or tonumber(mi) > 59 or tonumber(se) > 60 then return nil, "time out of range" end
  local frac = ""
  if zone:sub(1, 1) == "." then
    frac, zone = zone:match("^(%.%d+)(.*)$")
    if not frac then return nil, "a fraction of a second needs digits" end
  end
  if zone == "Z" or zone == "z" then zone = "Z"
  elseif not zone:match("^[%+%-]%d%d:%d%d$") then return nil, "needs a time zone: Z or +hh:mm" end
  return ("%s-%02d-%02dT%s:%s:%s%s%s"):format(y, mo, d, h, mi, se, frac, zone)
end

return util
