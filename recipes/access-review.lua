-- Access review of one organization: for every member, every entitlement the Hub
-- lists for them (active, disabled, expired; revoked ones are gone) and every role,
-- one CSV row each — the report an auditor asks for. With `app`, each member also gets
-- one `access` row: the Hub's effective-permissions answer for that application
-- (allowed or not, the resolved entitlement status, and the paths that give access). Read-only: running it again
-- changes nothing (only the timestamps of the Hub's data can differ).
recipe {
  name = "access-review",
  version = "1.0.0",
  description = "CSV of every member of an organization with their entitlements and roles.",
  params = {
    org = { type = "string", default = "org_acme", description = "organization id (org_…)" },
    app = { type = "string", description = "also check each member's effective access to this application (app_…)" },
  },
  needs  = { "organizations.manage", "users.list" },
  limits = { writes = 0, timeout = 3600 },
}

local util = require("lib.util")
local directory = require("lib.directory")
local value = util.value

local org_id = util.trim(params.org)
if org_id == nil then util.fail("parameter 'org' must be an organization id such as org_acme") end

-- With organizations.manage the list holds every organization.
local org
for o in hub.organizations.list() do
  if o.id == org_id then org = o end
end
if org == nil then util.fail("no organization %s is visible to this profile", org_id) end

local app_id = params.app and util.trim(params.app)
local counts = { members = 0, entitlements = 0, roles = 0, explicit_roles = 0, failed = 0, allowed = 0, denied = 0 }
local by_status = {}

-- Rows are produced member by member and streamed into the file: memory holds one
-- member's entitlements and roles at a time, however large the organization.
-- Entitlements for every member at once: the Hub-wide list, paged, up to one page per
-- 10 members (counting the members costs one read per 100), instead of one read per
-- member; a Hub with more entitlements than that falls back to per-member reads.
local member_count = hub.organizations.members(org.id):count()
local entitlements = directory.entitlements_by_user(directory.budget(member_count, 10))

local bar = progress(member_count, "members of " .. org.id)
local function rows()
  for member in hub.organizations.members(org.id) do
    counts.members = counts.members + 1
    bar:advance()
    -- Members carry a summary of the user; a Hub that leaves it out costs one read more.
    local user = member.user
    if type(user) ~= "table" or json.isnull(user) then
      local ok, got = pcall(hub.users.get, member.user_id)
      user = ok and got or {}
    end
    local person = {
      user_id = member.user_id or user.id, email = value(user.email),
      display_name = value(user.display_name), user_status = value(user.status),
    }
    local function row(fields)
      for k, v in pairs(person) do fields[k] = v end
      return fields
    end

    -- Both lists are read before anything is yielded, so a member whose access
    -- cannot be read is reported (and the run fails at the end) instead of leaving
    -- half a member in the file.
    local ok, result = pcall(function()
      local out = {}
      local held = entitlements:of(person.user_id)
      if held == nil then   -- beyond the preload: this member's own read
        held = {}
        for e in hub.entitlements.for_user(person.user_id) do held[#held + 1] = e end
      end
      for _, e in ipairs(held) do
        out[#out + 1] = row {
          kind = "entitlement", application_id = e.application_id, status = e.status,
          source = e.source, granted_at = value(e.created_at),
        }
      end
      for a in hub.users.roles(person.user_id) do
        local by = a.assigned_by
        local source = util.field(by, "type")
        if util.field(by, "id") then source = source .. ":" .. util.field(by, "id") end
        out[#out + 1] = row {
          kind = "role", role_id = a.role_id, status = a.implicit and "implicit" or "assigned",
          source = source, assigned_at = value(a.assigned_at),
        }
      end
      if app_id then
        local eff = hub.users.effective_permissions(person.user_id, app_id)
        local paths = {}
        for _, p in ipairs(eff.access_paths or {}) do
          paths[#paths + 1] = p.source .. ":" .. (util.value(p.organization_id) or p.entitlement_id)
        end
        out[#out + 1] = row {
          kind = "access", application_id = app_id, status = eff.entitlement_status,
          allowed = eff.allowed and "yes" or "no", access_paths = table.concat(paths, ";"),
        }
      end
      return out
    end)
    if not ok then
      counts.failed = counts.failed + 1
      log.error("cannot read the access of a member", {
        user_id = person.user_id, code = util.error_code(result), message = util.error_message(result) })
    else
      for _, r in ipairs(result) do
        if r.kind == "access" then
          if r.allowed == "yes" then counts.allowed = counts.allowed + 1 else counts.denied = counts.denied + 1 end
        elseif r.kind == "entitlement" then
          counts.entitlements = counts.entitlements + 1
          by_status[r.status] = (by_status[r.status] or 0) + 1
        else
          counts.roles = counts.roles + 1
          if r.status == "assigned" then counts.explicit_roles = counts.explicit_roles + 1 end
        end
        coroutine.yield(r)
      end
    end
  end
end

local columns = { "user_id", "email", "display_name", "user_status", "kind", "application_id", "role_id",
                  "status", "source", "granted_at", "assigned_at" }
if app_id then
  columns[#columns + 1] = "allowed"
  columns[#columns + 1] = "access_paths"
end
local report = export.csv("access-review-" .. org.id .. ".csv", coroutine.wrap(rows), {
  columns = columns,
  excel_safe = true,   -- names and emails come from users: no formulas when opened in a spreadsheet
})

bar:done()

local statuses = util.counts(by_status)
print(("access review of %s (%s)"):format(org.id, value(org.name) or "?"))
print(("  members: %d"):format(counts.members))
print(("  entitlements: %d%s"):format(counts.entitlements,
  statuses ~= "" and (" (" .. statuses .. ")") or ""))
print(("  roles: %d (%d assigned, %d implicit)"):format(counts.roles, counts.explicit_roles,
  counts.roles - counts.explicit_roles))
if app_id then
  print(("  access to %s: %d allowed, %d not"):format(app_id, counts.allowed, counts.denied))
end
print(("  report: %s (%d rows)"):format(report.name, report.rows))

if counts.failed > 0 then
  util.fail("the access of %d members could not be read; the report leaves them out", counts.failed)
end
