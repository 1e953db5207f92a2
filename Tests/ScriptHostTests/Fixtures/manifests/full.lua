recipe {
  name = "offboard",
  version = "1.2.0",
  description = "Suspend a user and remove every kind of access they hold.",
  params = {
    user    = { type = "string", required = true, description = "usr_… id or email" },
    reason  = { type = "string", default = "offboarded" },
    dry     = { type = "boolean", default = false },
    batch   = { type = "integer", default = 50 },
    ratio   = { type = "number", default = 1 },
    groups  = { type = "list", default = { "staff", "eng" } },
    input   = { type = "file", description = "CSV of users" },
  },
  needs  = { "users.manage", "entitlements.manage", "roles.manage", "audit.view" },
  limits = { writes = 200, timeout = 90.5, memory_mb = 64, instructions = 1000000 },
}
print("the body")
