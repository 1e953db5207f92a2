-- Benchmark fixture (scripts/bench-recipes): grant one application to every user of a
-- CSV (header `user_id`). A minimal stand-in for recipes/bulk-grant.lua.
recipe {
  name = "bench-bulk-grant",
  version = "1.0.0",
  description = "Grant an application to every user listed in a CSV.",
  params = {
    users = { type = "file", required = true, description = "CSV with a user_id column" },
    app   = { type = "string", required = true, description = "application id" },
  },
  needs  = { "entitlements.manage" },
  limits = { writes = 100000 },
}

local n = 0
for row in csv.rows(params.users) do
  hub.entitlements.grant(row.user_id, { application_id = params.app })
  n = n + 1
end
print(("granted %s to %d users"):format(params.app, n))
