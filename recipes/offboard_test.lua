-- Tests of offboard.lua (hubscript test recipes/; reference: docs/recipe-tests.md).

local function live_entitlements(s, user)
  local n = 0
  for _, e in ipairs(s:list("/users/" .. user .. "/entitlements", { include_inactive = true })) do
    if e.status ~= "revoked" then n = n + 1 end
  end
  return n
end

test.case("suspends the user and removes every kind of access", function()
  local s = test.sandbox {}
  local r = s:run("offboard.lua", { user = "ada@example.com", reason = "left the company" })
  expect(r).to_succeed()
  expect(r.output[1]).to_be("offboarded ada@example.com (usr_ada)")
  expect(s:get("/users/usr_ada").status).to_be("suspended")
  expect(live_entitlements(s, "usr_ada")).to_be(0)
  expect(#s:list("/audit-events", { action = "user.suspended", target_user_id = "usr_ada" })).to_be(1)
end)

test.case("a second run changes nothing", function()
  local s = test.sandbox {}
  expect(s:run("offboard.lua", { user = "usr_ada" })).to_succeed()
  local again = s:run("offboard.lua", { user = "usr_ada" })
  expect(again).to_succeed()
  expect(again.writes).to_be(0)
  expect(again.output).to_contain("  suspended: already")
end)

test.case("plan mode writes nothing, and apply makes the planned writes", function()
  local s = test.sandbox {}
  local plan = s:run("offboard.lua", { user = "usr_ada" }, { mode = "plan" })
  expect(plan).to_succeed()
  expect(plan.writes).to_be(0)
  expect(#plan.plan.writes > 0).to_be(true)
  expect(s:get("/users/usr_ada").status).to_be("active")
  local applied = s:run("offboard.lua", { user = "usr_ada" }, { mode = "apply", plan = plan })
  expect(applied).to_succeed()
  expect(applied.writes).to_be(#plan.plan.writes)
  expect(s:get("/users/usr_ada").status).to_be("suspended")
end)

test.case("killed after 3 writes, then resumed: each write is made once", function()
  local s = test.sandbox {}
  local start = time.now()
  local first = s:run("offboard.lua", { user = "usr_ada" }, { kill_after_writes = 3 })
  expect(first.killed).to_be(true)
  expect(first.writes).to_be(3)
  local resumed = s:resume(first.run_id)
  expect(resumed).to_succeed()
  expect(resumed.run_id).to_be(first.run_id)
  -- One audit event per change: nothing was done twice.
  expect(#s:list("/audit-events", { action = "user.suspended", target_user_id = "usr_ada" })).to_be(1)
  expect(#s:list("/audit-events", { action = "session.revoked", target_user_id = "usr_ada", since = start }))
    .to_be(2)
  expect(live_entitlements(s, "usr_ada")).to_be(0)
end)

test.case("offboards a user from the test's fixtures", function()
  local s = test.sandbox {
    fixtures = {
      users = { { id = "usr_temp", email = "temp@example.com", organization_id = "org_acme" } },
      entitlements = { { user_id = "usr_temp", application_id = "app_wiki" },
                       { user_id = "usr_temp", application_id = "app_crm", status = "disabled" } },
    },
  }
  local r = s:run("offboard.lua", { user = "temp@example.com" })
  expect(r).to_succeed()
  expect(r.output).to_contain("  entitlements revoked: 2, roles removed: 0, sessions revoked: 0")
  expect(r.output).to_contain("  API keys revoked: 0, organizations left: 1")
end)

test.case("an unknown user fails with not_found", function()
  local s = test.sandbox {}
  expect(s:run("offboard.lua", { user = "nobody@example.com" })).to_fail_with("not_found")
end)
