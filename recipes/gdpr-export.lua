-- A user's GDPR export bundle (the Hub's GET /users/{id}/export: user, profile,
-- settings, identities, sessions, organizations, roles, applications, audit events),
-- kept private: by default it goes encrypted into the vault as an object; `to=file`
-- writes it to the run's output folder instead. Read-only at the Hub (it allows 5
-- exports per user per day).
recipe {
  name = "gdpr-export",
  version = "1.0.0",
  description = "Export a user's GDPR bundle into the vault (or a file).",
  params = {
    user = { type = "string", required = true, description = "usr_… id or email" },
    to = { type = "string", default = "vault", description = "vault (an encrypted vault object) or file" },
  },
  needs = { "users.list", "users.manage" },
  limits = { writes = 0 },
}

local util = require("lib.util")

if params.to ~= "vault" and params.to ~= "file" then util.fail("parameter 'to' must be vault or file, not '%s'", params.to) end

local user = hub.users.get(params.user)
local bundle = hub.users.export(user.id)
local name = params.to == "vault" and ("vault:gdpr/" .. user.id .. ".jsonl") or (user.id .. "-gdpr.jsonl")
local written = export.jsonl(name, { bundle })

local function count(list) return type(list) == "table" and #list or 0 end
print(("exported the GDPR bundle of %s (%s) to %s"):format(user.email, user.id, written.name))
print(("  sessions %d, organizations %d, roles %d, applications %d, audit events %d"):format(
  count(bundle.sessions), count(bundle.organizations), count(bundle.roles), count(bundle.applications),
  count(bundle.audit_events)))
