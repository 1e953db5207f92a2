-- Rotate an API key without downtime: create a new key with the same name, store its
-- secret in the vault (the recipe never sees it: seed 004, results, never keys), and
-- revoke the older keys of that name once the grace period after their replacement
-- has passed, so the jobs that read the vault entry have time to pick up the new
-- secret. Run it on a schedule: each run does only what is due, so a second run right
-- after the first makes no write.
--
-- Needs a user session (`hubscript login`): the Hub lets no API key manage keys.
recipe {
  name = "rotate-api-key",
  version = "1.0.0",
  description = "Create a new API key into the vault, revoke the old one after a grace period.",
  params = {
    name = { type = "string", required = true, description = "the key's name, e.g. ci-deploy" },
    store = { type = "string", required = true, description = "vault entry for the secret, e.g. hub/keys/ci-deploy" },
    permissions = { type = "list", default = {}, description = "permissions of a new key (default: those of the newest key of that name)" },
    mode = { type = "string", default = "live", description = "live or test" },
    max_age_days = { type = "integer", default = 90, description = "rotate when the newest key is at least this old" },
    grace_hours = { type = "integer", default = 24, description = "revoke an old key this long after its replacement was created" },
    force = { type = "boolean", default = false, description = "rotate now, whatever the newest key's age" },
  },
  needs = { "api_keys.manage" },
  limits = { writes = 20 },
}

local util = require("lib.util")

if params.mode ~= "live" and params.mode ~= "test" then util.fail("parameter 'mode' must be live or test") end
if params.max_age_days < 0 or params.grace_hours < 0 then util.fail("max_age_days and grace_hours cannot be negative") end

-- Live keys of that name, newest first.
local keys = {}
for k in hub.api_keys.list() do
  if k.name == params.name then keys[#keys + 1] = k end
end
table.sort(keys, function(a, b) return a.created_at > b.created_at end)

local newest = keys[1]
local created
if newest == nil or params.force or util.days_since(newest.created_at) >= params.max_age_days then
  local permissions = params.permissions
  if #permissions == 0 and newest then permissions = newest.permissions end
  if #permissions == 0 then util.fail("no key named '%s' yet: give its permissions (--param permissions=users.list,…)", params.name) end
  created = hub.api_keys.create({ name = params.name, permissions = permissions, mode = params.mode },
                                { store = params.store })
  print(("created %s (%s), secret stored in the vault entry %s"):format(created.id, params.name, created.secret_stored_in))
  -- A resumed run replays the create from the journal, and the list read before it
  -- already holds that key: keep it once, first.
  for i = #keys, 1, -1 do
    if keys[i].id == created.id then table.remove(keys, i) end
  end
  table.insert(keys, 1, created)
else
  print(("%s (%s) is %d days old: no rotation (every %d days)"):format(newest.id, params.name,
    util.days_since(newest.created_at), params.max_age_days))
end

-- Every key older than the newest is revoked once its replacement is grace_hours old.
local replacement = keys[1]
local age = created and 0 or time.diff(time.now(), replacement.created_at)
local revoked, waiting = 0, 0
for i = 2, #keys do
  local old = keys[i]
  if old.id ~= replacement.id then -- never the replacement itself
    if age >= params.grace_hours * 3600 then
      hub.api_keys.revoke(old.id)
      print(("revoked %s (replaced by %s)"):format(old.id, replacement.id))
      revoked = revoked + 1
    else
      print(("%s stays until %s (grace period)"):format(old.id,
        time.add(replacement.created_at, params.grace_hours * 3600)))
      waiting = waiting + 1
    end
  end
end
print(("rotate-api-key %s: %s, %d revoked, %d in their grace period"):format(params.name,
  created and "rotated" or "current", revoked, waiting))
