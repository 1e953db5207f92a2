-- Tests of bulk-grant.lua (hubscript test recipes/; reference: docs/recipe-tests.md).
-- The CSV is recipes/examples/bulk-grant-users.csv: ada (holds app_wiki), support by
-- id, admin by email, and an address nobody has.

local csv_file = "examples/bulk-grant-users.csv"

local function live(s, user, app)
  local n = 0
  for _, e in ipairs(s:list("/users/" .. user .. "/entitlements", { application_id = app })) do
    if e.status == "active" or e.status == "disabled" then n = n + 1 end
  end
  return n
end

test.case("grants the users who lack the app, one line and one report row each", function()
  local s = test.sandbox {}
  local r = s:run("bulk-grant.lua", { file = csv_file, app = "app_wiki" })
  expect(r).to_succeed()
  expect(r.output).to_contain("row 1 ada@example.com (usr_ada): already held")
  expect(r.output).to_contain("row 2 usr_support: granted")
  expect(r.output).to_contain("row 3 admin@example.com (usr_admin): granted")
  expect(r.output).to_contain("row 4 nobody@example.com: not found")
  expect(r.output).to_contain("bulk-grant app_wiki: 2 granted, 1 already held, 1 not found, 0 skipped, 0 errors (4 rows)")
  expect(r.writes).to_be(2)
  expect(r.exports).to_equal({ { name = "bulk-grant-report.csv", rows = 4 } })
  expect(live(s, "usr_support", "app_wiki")).to_be(1)
  expect(live(s, "usr_admin", "app_wiki")).to_be(1)
end)

test.case("a second run over the same file grants nothing", function()
  local s = test.sandbox {}
  expect(s:run("bulk-grant.lua", { file = csv_file, app = "app_wiki" })).to_succeed()
  local again = s:run("bulk-grant.lua", { file = csv_file, app = "app_wiki" })
  expect(again).to_succeed()
  expect(again.writes).to_be(0)
  expect(again.output).to_contain("bulk-grant app_wiki: 0 granted, 3 already held, 1 not found, 0 skipped, 0 errors (4 rows)")
end)

test.case("killed after the first grant, then resumed: each user is granted once", function()
  local s = test.sandbox {}
  local first = s:run("bulk-grant.lua", { file = csv_file, app = "app_crm" }, { kill_after_writes = 1 })
  expect(first.killed).to_be(true)
  expect(first.writes).to_be(1)
  local resumed = s:resume(first.run_id)
  expect(resumed).to_succeed()
  for _, user in ipairs { "usr_support", "usr_admin" } do
    expect(live(s, user, "app_crm")).to_be(1)
    expect(#s:list("/audit-events", { action = "entitlement.granted", target_user_id = user, application_id = "app_crm" }))
      .to_be(1)
  end
end)

test.case("killed after the first grant, then resumed: the report of a run that never stopped", function()
  local whole = test.sandbox {}:run("bulk-grant.lua", { file = csv_file, app = "app_crm" })
  expect(whole).to_succeed()
  local s = test.sandbox {}
  local first = s:run("bulk-grant.lua", { file = csv_file, app = "app_crm" }, { kill_after_writes = 1 })
  expect(first.killed).to_be(true)
  local resumed = s:resume(first.run_id)
  expect(resumed).to_succeed()
  -- Served the reads the killed pass made, the resume sees its own grant as its own.
  expect(resumed.output).to_equal(whole.output)
  expect(resumed.reads).to_be(0)
  expect(resumed.reads_replayed > 0).to_be(true)
  expect(resumed.replayed).to_be(1)
end)

test.case("killed while a grant is in flight, then resumed: the grant is replayed, not repeated", function()
  local s = test.sandbox {}
  local first = s:run("bulk-grant.lua", { file = csv_file, app = "app_crm" }, { kill_during_write = 1 })
  expect(first.killed).to_be(true)
  expect(s:resume(first.run_id)).to_succeed()
  expect(live(s, "usr_support", "app_crm")).to_be(1)
  expect(live(s, "usr_admin", "app_crm")).to_be(1)
end)

test.case("plan mode grants nothing", function()
  local s = test.sandbox {}
  local plan = s:run("bulk-grant.lua", { file = csv_file, app = "app_crm" }, { mode = "plan" })
  expect(plan).to_succeed()
  expect(#plan.plan.writes).to_be(2)
  expect(live(s, "usr_support", "app_crm")).to_be(0)
end)

test.case("an unknown application is refused before any row", function()
  local s = test.sandbox {}
  local r = s:run("bulk-grant.lua", { file = csv_file, app = "app_nope" })
  expect(r.exit_code).to_be(1)
  expect(r.failure.message).to_contain("unknown application 'app_nope'")
  expect(r.writes).to_be(0)
end)
