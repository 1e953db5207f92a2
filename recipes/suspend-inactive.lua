-- Suspend members inactive for a while: every active user whose last login is at least
-- `days` days ago — or, with `never`, who never logged in and was created at least that
-- long ago — is suspended (the Hub revokes their sessions). One CSV row per user found
-- (suspended, or kept because `keep` lists them), and a one-line summary sent to your
-- phone through Dispatch. Look first, then apply:
--   hubscript plan recipes/suspend-inactive.lua --param days=90 --out plan.json
--   hubscript apply plan.json
-- Safe to run again: a suspended user is no longer active, so the next run skips them.
recipe {
  name = "suspend-inactive",
  version = "1.0.0",
  description = "Suspend active users who have not logged in for DAYS days; CSV report; Dispatch summary.",
  params = {
    days   = { type = "integer", default = 90, description = "inactive for at least this many days (1 or more)" },
    org    = { type = "string", description = "only members of this organization (org_…)" },
    keep   = { type = "list", description = "emails never suspended (break-glass and service accounts)" },
    never  = { type = "boolean", default = true,
               description = "also users who never logged in and were created at least DAYS days ago" },
    notify = { type = "boolean", default = true, description = "send the summary through Dispatch" },
    reason = { type = "string", default = "inactive", description = "the suspension reason the Hub records" },
  },
  needs  = { "users.list", "users.manage", "dispatch.send" },
  limits = { writes = 1000, timeout = 3600 },
}

local util = require("lib.util")

if params.days < 1 then util.fail("parameter 'days' must be 1 or more (days of inactivity), got %d", params.days) end

local now = time.now()
local cutoff = time.days_ago(params.days)
local keep = {}
for _, email in ipairs(params.keep or {}) do keep[util.trim(email):lower()] = true end

-- Who is inactive, found before anything is suspended: suspending changes the list
-- being paged through.
local found, active = {}, 0
for user in hub.users.list { status = "active", organization_id = params.org } do
  active = active + 1
  local last_login = util.value(user.last_login_at)
  local since = last_login or user.created_at
  if time.diff(cutoff, since) >= 0 and (last_login ~= nil or params.never) then
    found[#found + 1] = {
      user_id = user.id, email = user.email, display_name = util.value(user.display_name),
      last_login_at = last_login or "never", days_inactive = math.floor(time.diff(now, since) / 86400),
    }
  end
end

local counts = { suspended = 0, kept = 0 }
for _, row in ipairs(found) do
  if keep[row.email:lower()] then
    row.outcome = "kept"
  else
    local result = hub.users.suspend(row.user_id, { reason = params.reason })
    row.outcome = result.planned and "suspended (planned)" or "suspended"
    counts.suspended = counts.suspended + 1
  end
  if row.outcome == "kept" then counts.kept = counts.kept + 1 end
  print(("%s %s: last login %s (%d days)"):format(row.outcome, row.email, row.last_login_at, row.days_inactive))
end

local report = export.csv("suspend-inactive.csv", found, {
  columns = { "user_id", "email", "display_name", "last_login_at", "days_inactive", "outcome" }, excel_safe = true })

local scope = params.org and (" of " .. params.org) or ""
local summary = ("%d suspended, %d kept, of %d active users%s inactive %d+ days"):format(
  counts.suspended, counts.kept, active, scope, params.days)
print("suspend-inactive: " .. summary)
print(("report: %s (%d rows)"):format(report.name, report.rows))

if params.notify and counts.suspended > 0 then
  dispatch.send { title = "Inactive users suspended", body = summary }
end
