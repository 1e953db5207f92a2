-- Onboard people: create (or invite) each user, assign roles and grant applications,
-- from parameters (one person) or a template CSV (one row per person). Safe to run
-- again: everything is checked first, so a second run makes no write.
--
-- The CSV has a header row with `email` and optionally `display_name`, `roles` and
-- `apps` columns (several values separated by `;`). Values in the file are added to
-- the `roles` and `apps` parameters, which apply to every row.
recipe {
  name = "onboard",
  version = "1.0.0",
  description = "Create or invite users, assign roles and grant applications (params or a template CSV).",
  params = {
    email = { type = "string", description = "one person's email (or use file)" },
    display_name = { type = "string", description = "their display name (default: the part before @)" },
    file = { type = "file", description = "template CSV: email, display_name, roles, apps (';'-separated)" },
    roles = { type = "list", default = {}, description = "role ids for everyone, e.g. role_support" },
    apps = { type = "list", default = {}, description = "application ids to grant everyone, e.g. app_wiki" },
    status = { type = "string", default = "invited", description = "invited (an invitation is sent) or active" },
    source = { type = "string", default = "admin_grant", description = "entitlement source: admin_grant, trial or purchase" },
  },
  needs = { "users.list", "users.manage", "roles.manage", "entitlements.manage" },
  limits = { writes = 1000, timeout = 3600 },
}

local util = require("lib.util")

if params.status ~= "invited" and params.status ~= "active" then
  util.fail("parameter 'status' must be invited or active, not '%s'", params.status)
end
if (params.email == nil) == (params.file == nil) then
  util.fail("give either 'email' (one person) or 'file' (a template CSV), not both or neither")
end

local function split(s)
  local out = {}
  for part in tostring(s or ""):gmatch("[^;]+") do
    local v = util.trim(part)
    if v then out[#out + 1] = v end
  end
  return out
end

local function merged(base, extra)
  local out, seen = {}, {}
  for _, list in ipairs { base, extra } do
    for _, v in ipairs(list) do
      if not seen[v] then seen[v] = true; out[#out + 1] = v end
    end
  end
  return out
end

local function people()
  if params.email then
    coroutine.yield { email = params.email, display_name = params.display_name, roles = {}, apps = {} }
    return
  end
  for row in csv.rows(params.file) do
    local r = {}
    for k, v in pairs(row) do r[k:lower():match("^%s*(.-)%s*$")] = util.trim(v) end
    coroutine.yield { email = r.email, display_name = r.display_name, roles = split(r.roles), apps = split(r.apps) }
  end
end

-- The user with this email, or nil (deleted users are not found: they cannot be reused).
local function find(email)
  local ok, user = pcall(hub.users.get, email)
  if ok then return user end
  if util.error_code(user) == "not_found" then return nil end
  error(user, 0)
end

local totals = { created = 0, existing = 0, roles = 0, grants = 0, failed = 0 }

local function onboard(person)
  local email = util.trim(person.email)
  if email == nil then error({ code = "missing_email", message = "the row has no email" }, 0) end
  local user, outcome = find(email), "exists"
  if user == nil then
    local fields = { email = email, status = params.status }
    if person.display_name then fields.display_name = person.display_name end
    user = hub.users.create(fields)
    outcome = "created (" .. params.status .. ")"
    totals.created = totals.created + 1
  else
    totals.existing = totals.existing + 1
  end

  local held = {}
  if outcome == "exists" then
    for a in hub.users.roles(user.id) do held[a.role_id] = true end
  end
  local roles = 0
  for _, role in ipairs(merged(params.roles, person.roles)) do
    if not held[role] then hub.roles.assign(user.id, role); roles = roles + 1 end
  end

  local live = {}
  if outcome == "exists" then
    for e in hub.entitlements.for_user(user.id) do
      if e.status == "active" or e.status == "disabled" then live[e.application_id] = true end
    end
  end
  local grants = 0
  for _, app in ipairs(merged(params.apps, person.apps)) do
    if not live[app] then
      local ok, err = pcall(hub.entitlements.grant, user.id, { application_id = app, source = params.source })
      if ok then grants = grants + 1
      elseif util.error_code(err) ~= "entitlement_already_exists" then error(err, 0) end
    end
  end
  totals.roles, totals.grants = totals.roles + roles, totals.grants + grants
  print(("%s (%s): %s, roles +%d, apps +%d"):format(email, user.id, outcome, roles, grants))
end

for person in coroutine.wrap(people) do
  local ok, err = pcall(onboard, person)
  if not ok then
    totals.failed = totals.failed + 1
    print(("%s: error: %s"):format(tostring(person.email), util.error_code(err) or util.error_message(err)))
  end
end

print(("onboard: %d created, %d already there, %d roles assigned, %d applications granted, %d errors")
  :format(totals.created, totals.existing, totals.roles, totals.grants, totals.failed))
if totals.failed > 0 then util.fail("%d people could not be onboarded", totals.failed) end
