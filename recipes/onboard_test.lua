-- Tests of onboard.lua (hubscript test recipes/; reference: docs/recipe-tests.md).

local function live_apps(s, user)
  local apps = {}
  for _, e in ipairs(s:list("/users/" .. user .. "/entitlements")) do
    if e.status == "active" or e.status == "disabled" then apps[#apps + 1] = e.application_id end
  end
  table.sort(apps)
  return apps
end

local function role_ids(s, user)
  local ids = {}
  for _, a in ipairs(s:get("/users/" .. user .. "/roles").data) do ids[#ids + 1] = a.role_id end
  table.sort(ids)
  return ids
end

test.case("invites a new person, assigns roles and grants applications", function()
  local s = test.sandbox {}
  local r = s:run("onboard.lua", { email = "Grace@Example.com", display_name = "Grace Hopper",
                                   roles = { "role_support" }, apps = { "app_wiki", "app_crm" } })
  expect(r).to_succeed()
  expect(r.output[1]).to_match("^Grace@Example.com %(usr_[a-z0-9]+%): created %(invited%), roles %+1, apps %+2$")
  expect(r.output[2]).to_be("onboard: 1 created, 0 already there, 1 roles assigned, 2 applications granted, 0 errors")
  local user = s:list("/users", { email = "grace@example.com", status = "invited" })[1]
  expect(user.display_name).to_be("Grace Hopper")
  expect(role_ids(s, user.id)).to_equal({ "role_member", "role_support" })
  expect(live_apps(s, user.id)).to_equal({ "app_crm", "app_wiki" })
  expect(#s:list("/audit-events", { action = "user.created", target_user_id = user.id })).to_be(1)
end)

test.case("a second run changes nothing", function()
  local s = test.sandbox {}
  local params = { email = "alan@example.com", status = "active", roles = { "role_support" }, apps = { "app_wiki" } }
  expect(s:run("onboard.lua", params)).to_succeed()
  local again = s:run("onboard.lua", params)
  expect(again).to_succeed()
  expect(again.writes).to_be(0)
  expect(again.output[1]).to_match(": exists, roles %+0, apps %+0$")
end)

test.case("an existing user only gets what they lack", function()
  local s = test.sandbox {}
  local r = s:run("onboard.lua", { email = "ada@example.com", apps = { "app_wiki", "app_chat" } })
  expect(r).to_succeed()
  expect(r.output[1]).to_be("ada@example.com (usr_ada): exists, roles +0, apps +1")
  expect(r.writes).to_be(1)
end)

test.case("a template CSV onboards every row", function()
  local s = test.sandbox {}
  local r = s:run("onboard.lua", { file = "examples/onboard-template.csv", apps = { "app_chat" } })
  expect(r).to_succeed()
  expect(r.output[4]).to_be("onboard: 2 created, 1 already there, 2 roles assigned, 6 applications granted, 0 errors")
  local grace = s:list("/users", { email = "grace@example.com", status = "invited" })[1]
  expect(live_apps(s, grace.id)).to_equal({ "app_chat", "app_crm", "app_wiki" })
end)

test.case("plan mode writes nothing, and apply makes the planned writes", function()
  local s = test.sandbox {}
  local params = { email = "plan@example.com", roles = { "role_support" }, apps = { "app_wiki" } }
  local plan = s:run("onboard.lua", params, { mode = "plan" })
  expect(plan).to_succeed()
  expect(plan.plan.writes[1].summary).to_be("create user plan@example.com (invited)")
  -- The user the plan would create is usr_planned_1 in its later writes; apply puts
  -- the id the Hub gives in its place.
  expect(plan.plan.writes[2].path).to_be("/users/usr_planned_1/roles/role_support")
  expect(plan.plan.writes[3].path).to_be("/users/usr_planned_1/entitlements")
  expect(#s:list("/users", { email = "plan@example.com", status = "invited" })).to_be(0)
  local applied = s:run("onboard.lua", params, { mode = "apply", plan = plan })
  expect(applied).to_succeed()
  expect(applied.writes).to_be(3)
  local user = s:list("/users", { email = "plan@example.com", status = "invited" })[1]
  expect(applied.output[1]).to_be("plan@example.com (" .. user.id .. "): created (invited), roles +1, apps +1")
  expect(role_ids(s, user.id)).to_equal({ "role_member", "role_support" })
  expect(live_apps(s, user.id)).to_equal({ "app_wiki" })
end)

test.case("an apply stopped after the create, then resumed: the user is created once", function()
  local s = test.sandbox {}
  local params = { email = "half@example.com", roles = { "role_support" }, apps = { "app_wiki", "app_crm" } }
  local plan = s:run("onboard.lua", params, { mode = "plan" })
  local first = s:run("onboard.lua", params, { mode = "apply", plan = plan, kill_after_writes = 2 })
  expect(first.killed).to_be(true)
  expect(s:resume(first.run_id)).to_succeed()
  expect(#s:list("/audit-events", { action = "user.created" })).to_be(1)
  local user = s:list("/users", { email = "half@example.com", status = "invited" })[1]
  expect(role_ids(s, user.id)).to_equal({ "role_member", "role_support" })
  expect(live_apps(s, user.id)).to_equal({ "app_crm", "app_wiki" })
end)

test.case("killed after the create, then resumed: the user is created once", function()
  local s = test.sandbox {}
  local params = { email = "once@example.com", roles = { "role_support" }, apps = { "app_wiki" } }
  local first = s:run("onboard.lua", params, { kill_after_writes = 1 })
  expect(first.killed).to_be(true)
  expect(s:resume(first.run_id)).to_succeed()
  expect(#s:list("/audit-events", { action = "user.created" })).to_be(1)
  local user = s:list("/users", { email = "once@example.com", status = "invited" })[1]
  expect(live_apps(s, user.id)).to_equal({ "app_wiki" })
end)

test.case("bad parameters stop the run before any request", function()
  local s = test.sandbox {}
  expect(s:run("onboard.lua", { email = "x@example.com", status = "suspended" }))
    .to_fail_with(1)
  expect(s:run("onboard.lua", {}).failure.message).to_match("give either 'email'")
end)
