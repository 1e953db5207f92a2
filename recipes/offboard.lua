-- Offboard a user: suspend them and remove every kind of access they hold, then
-- export their audit trail. Safe to run again: the second run changes nothing.
recipe {
  name = "offboard",
  version = "1.0.0",
  description = "Suspend a user and remove every kind of access they hold.",
  params = {
    user   = { type = "string", required = true, description = "usr_… id or email" },
    reason = { type = "string", default = "offboarded" },
  },
  needs  = { "users.list", "users.manage", "entitlements.manage", "roles.manage",
             "api_keys.manage", "organizations.manage", "audit.view" },
  limits = { writes = 200 },
}

local user = hub.users.get(params.user)
local done = { suspended = false, entitlements = 0, roles = 0, sessions = 0, api_keys = 0, organizations = 0 }

-- Sessions first: suspending revokes them too, but revoking them explicitly before the
-- suspension keeps a plan (hubscript plan) identical to what apply will do.
done.sessions = hub.sessions.revoke_all(user.id)

if user.status ~= "suspended" then
  hub.users.suspend(user.id, { reason = params.reason })
  done.suspended = true
end

-- Every live entitlement (active, disabled or expired) is revoked; revoked ones are
-- left out of the list already.
for e in hub.entitlements.for_user(user.id) do
  if e.status ~= "revoked" then
    hub.entitlements.revoke(e.id, params.reason)
    done.entitlements = done.entitlements + 1
  end
end

for assignment in hub.users.roles(user.id) do
  if not assignment.implicit then
    hub.roles.remove(user.id, assignment.role_id)
    done.roles = done.roles + 1
  end
end

for key in hub.api_keys.list { owner_user_id = user.id } do
  hub.api_keys.revoke(key.id)
  done.api_keys = done.api_keys + 1
end

-- One read per organization, whatever its size: the users list filtered by the
-- organization and the user's exact email answers "is a member" in one page (paging
-- through every organization's members costs a read per 100 members).
for org in hub.organizations.list() do
  if hub.users.list { organization_id = org.id, email = user.email }:first() then
    hub.organizations.remove_member(org.id, user.id)
    done.organizations = done.organizations + 1
  end
end

local trail = export.jsonl(user.id .. "-audit.jsonl", hub.audit.query { target_user_id = user.id })

print(("offboarded %s (%s)"):format(user.email, user.id))
print(("  suspended: %s"):format(done.suspended and "yes" or "already"))
print(("  entitlements revoked: %d, roles removed: %d, sessions revoked: %d"):format(
  done.entitlements, done.roles, done.sessions))
print(("  API keys revoked: %d, organizations left: %d"):format(done.api_keys, done.organizations))
print(("  audit trail: %d events in %s"):format(trail.rows, trail.name))
