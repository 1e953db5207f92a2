-- Export audit events to a JSON Lines or CSV file, streaming: events go from the
-- Hub's pages straight into the file, so memory stays constant however many there
-- are. Read-only: running it again changes nothing on the Hub.
recipe {
  name = "audit-export",
  version = "1.0.0",
  description = "Export the audit events of a time range (optionally by action or target user) to JSONL or CSV.",
  params = {
    since  = { type = "string", required = true,
               description = "first instant, inclusive: ISO 8601 (2026-11-01 or 2026-11-01T00:00:00Z)" },
    ["until"] = { type = "string", description = "end instant, exclusive (default: now)" },
    format = { type = "string", default = "jsonl", description = "jsonl (one event per line, as the Hub sends it) or csv" },
    action = { type = "list", description = "only these actions, e.g. user.suspended,entitlement.revoked" },
    user   = { type = "string", description = "only events whose target user is this usr_… id or email" },
    out    = { type = "string", description = "file name in the run's output folder (default audit-events.jsonl / .csv)" },
  },
  needs  = { "audit.view", "users.list" },
  limits = { writes = 0, timeout = 3600 },
}

local util = require("lib.util")

-- Parameters the manifest's types cannot check: refused before any request.
local format = (util.trim(params.format) or "jsonl"):lower()
if format ~= "jsonl" and format ~= "csv" then
  util.fail("parameter 'format' must be jsonl or csv, got '%s'", params.format)
end

local filter = {}
local since, why = util.timestamp(params.since)
if not since then util.fail("parameter 'since' must be an ISO 8601 timestamp (%s), got '%s'", why, params.since) end
filter.since = since
if params["until"] ~= nil then
  local till, reason = util.timestamp(params["until"])
  if not till then util.fail("parameter 'until' must be an ISO 8601 timestamp (%s), got '%s'", reason, params["until"]) end
  filter["until"] = till
end

if params.action ~= nil then
  local actions = {}
  for _, a in ipairs(params.action) do
    a = util.trim(a)
    if a then actions[#actions + 1] = a end
  end
  if #actions > 0 then filter.action = actions end
end

local who
if util.trim(params.user) then
  local u = util.trim(params.user)
  if u:find("@", 1, true) then
    -- An email is resolved to the id (the Hub filters by id only).
    local ok, user = pcall(hub.users.get, u)
    if not ok then
      if util.error_code(user) == "not_found" then util.fail("no user has the email %s", u) end
      error(user, 0)
    end
    filter.target_user_id, who = user.id, ("%s (%s)"):format(u, user.id)
  else
    -- An id is used as is: also works for deleted users, whose events remain.
    filter.target_user_id, who = u, u
  end
end

local name = util.trim(params.out) or ("audit-events." .. format)
-- A hub list shows its own progress on a terminal (events read so far). Handed to
-- export.jsonl untouched, its pages go to the file without becoming Lua tables.
local events = hub.audit.query(filter)

local summary
if format == "jsonl" then
  summary = export.jsonl(name, events)
else
  local field = util.field
  summary = export.csv(name, util.map(events, function(e)
    return {
      id = e.id, timestamp = e.timestamp, action = e.action,
      actor_type = field(e.actor, "type"), actor_id = field(e.actor, "id"),
      target_type = field(e.target, "type"), target_id = field(e.target, "id"),
      target_user_id = util.value(e.target_user_id), application_id = util.value(e.application_id),
      organization_id = util.value(e.organization_id), request_id = util.value(e.request_id),
    }
  end), { columns = { "id", "timestamp", "action", "actor_type", "actor_id", "target_type", "target_id",
                      "target_user_id", "application_id", "organization_id", "request_id" } })
end

local scope = { "since " .. filter.since }
if filter["until"] then scope[#scope + 1] = "until " .. filter["until"] end
if filter.action then scope[#scope + 1] = "action " .. table.concat(filter.action, "|") end
if who then scope[#scope + 1] = "target user " .. who end
print(("exported %d audit events to %s (%s)"):format(summary.rows, summary.name, format))
print("  filter: " .. table.concat(scope, ", "))
