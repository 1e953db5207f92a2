-- Bulk lookups for recipes that work through many rows: a few paged list reads instead
-- of one request per row (require("lib.directory")).
--
-- At the Hub's limits (100 requests a minute, 20 grants a minute) a request per row is
-- what makes a 5,000-row file take an hour. These read the users, or one application's
-- entitlements, with paged lists (100 a page) — but never more pages than a budget the
-- caller sets from its row count, so a small file against a large organization does not
-- read the whole directory: past the budget, lookups fall back to one request each.
local util = require("lib.util")

local directory = {}

-- Reads up to max_items items of a hub list into fn; true when the list ended within
-- them (reading one item more to know costs at most one more page, only when it did not).
local function take(list, max_items, fn)
  local n = 0
  for item in list do
    if n >= max_items then return false end
    n = n + 1
    fn(item)
  end
  return true
end

-- Pages to spend on a preload for `rows` rows: one per `rows_per_page` rows (default 40,
-- so a preload costs at most 0.025 requests a row), at least one.
function directory.budget(rows, rows_per_page)
  return math.max(1, math.ceil(rows / (rows_per_page or 40)))
end

-- A user finder over the Hub's users (deleted users excluded, as the Hub's lists do).
-- finder:find(input) takes an id (usr_…) or an email (matched without regard to case, as
-- spreadsheets capitalise them) and returns the user ({id, email, status}) or nil and
-- "not_found". Reads at most `pages` pages up front; when the directory is larger,
-- inputs not among them are looked up one by one (hub.users.get).
function directory.users(pages)
  local by_id, by_email = {}, {}
  local complete = take(hub.users.list {}, pages * 100, function(u)
    local user = { id = u.id, email = u.email, status = u.status }
    by_id[u.id] = user
    if type(u.email) == "string" then by_email[u.email:lower()] = user end
  end)
  local finder = { complete = complete }
  function finder:find(input)
    local known = by_id[input] or by_email[input:lower()]
    if known then return known end
    if complete then return nil, "not_found" end
    local got, user = pcall(hub.users.get, input)
    if not got and util.error_code(user) == "not_found" and input:find("@", 1, true) and input:lower() ~= input then
      got, user = pcall(hub.users.get, input:lower())
    end
    if not got then
      if util.error_code(user) == "not_found" then return nil, "not_found" end
      error(user, 0)
    end
    return { id = user.id, email = user.email, status = user.status }
  end
  return finder
end

-- The live (active or disabled) entitlements to one application, by user id, personal or
-- through an organization seat; expired and revoked ones do not count. holder:get(user_id)
-- returns the entitlement or nil. Reads at most `pages` pages up front; for a user not
-- among them when the list is longer, asks the Hub (one read).
function directory.entitlements(app, pages)
  local held = {}
  local function live(e) return e.status == "active" or e.status == "disabled" end
  local complete = take(hub.entitlements.list { application_id = app }, pages * 100, function(e)
    if live(e) and (held[e.user_id] == nil or held[e.user_id].status ~= "active") then held[e.user_id] = e end
  end)
  local holder = { complete = complete }
  function holder:get(user_id)
    if held[user_id] or complete then return held[user_id] end
    for e in hub.entitlements.for_user(user_id, { application_id = app }) do
      if live(e) then return e end
    end
    return nil
  end
  -- A grant made by this run (so a file that names a user twice grants once).
  function holder:add(user_id, e) held[user_id] = e end
  return holder
end

-- Every user's entitlements (revoked ones left out, as the per-user list does), from the
-- Hub-wide list read up to `pages` pages. finder:of(user_id) returns the user's list, or
-- nil when the Hub holds more entitlements than were read and this user's may be among
-- the rest (then ask hub.entitlements.for_user). The order is the Hub's list order.
function directory.entitlements_by_user(pages)
  local by_user = {}
  local complete = take(hub.entitlements.list {}, pages * 100, function(e)
    if not util.isnull(e.user_id) then
      local list = by_user[e.user_id]
      if list == nil then list = {}; by_user[e.user_id] = list end
      list[#list + 1] = e
    end
  end)
  local finder = { complete = complete }
  function finder:of(user_id)
    if by_user[user_id] then return by_user[user_id] end
    if complete then return {} end
    return nil
  end
  return finder
end

return directory
