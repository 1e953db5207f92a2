-- Tests of suspend-inactive.lua (hubscript test recipes/; reference: docs/recipe-tests.md).

-- One clock reading for the whole file: the fixtures and the expected lines name the
-- same instants, whenever the second turns.
local start = time.now()
local function days_ago(n) return time.add(start, -n * 86400) end

-- Beside the fixed accounts (admin, support and Ada, all active this week): one user per
-- case the recipe tells apart.
local function people()
  return {
    users = {
      { id = "usr_old", email = "old@example.com", created_at = days_ago(400), last_login_at = days_ago(200) },
      { id = "usr_edge", email = "edge@example.com", created_at = days_ago(400), last_login_at = days_ago(91) },
      { id = "usr_recent", email = "recent@example.com", created_at = days_ago(400), last_login_at = days_ago(10) },
      { id = "usr_never", email = "never@example.com", created_at = days_ago(200) },
      { id = "usr_new", email = "new@example.com", created_at = days_ago(10) },
      { id = "usr_glass", email = "Break.Glass@example.com", created_at = days_ago(400),
        last_login_at = days_ago(300) },
      { id = "usr_gone", email = "gone@example.com", status = "suspended", created_at = days_ago(400),
        last_login_at = days_ago(300) },
    },
  }
end

local function status(s, id) return s:get("/users/" .. id).status end

test.case("suspends users inactive 90 days or never logged in, keeps the listed, reports, notifies", function()
  local s = test.sandbox { fixtures = people() }
  local r = s:run("suspend-inactive.lua", { days = 90, keep = { "break.glass@example.com" } })
  expect(r).to_succeed()
  expect(r.writes).to_be(4)   -- three suspensions and the notification
  for _, id in ipairs({ "usr_old", "usr_edge", "usr_never" }) do expect(status(s, id)).to_be("suspended") end
  for _, id in ipairs({ "usr_recent", "usr_new", "usr_glass", "usr_admin", "usr_support", "usr_ada" }) do
    expect(status(s, id)).to_be("active")
  end
  expect(r.output[#r.output - 1]).to_be("suspend-inactive: 3 suspended, 1 kept, of 9 active users inactive 90+ days")
  expect(r.output).to_contain("suspended never@example.com: last login never (200 days)")
  expect(r.output).to_contain("kept Break.Glass@example.com: last login " .. days_ago(300) .. " (300 days)")
  expect(r.exports[1].name).to_be("suspend-inactive.csv")
  expect(r.exports[1].rows).to_be(4)
  local sent = s:dispatch_sent()
  expect(#sent).to_be(1)
  expect(sent[1].body).to_be("3 suspended, 1 kept, of 9 active users inactive 90+ days")
end)

test.case("never = false leaves users who never logged in alone", function()
  local s = test.sandbox { fixtures = people() }
  expect(s:run("suspend-inactive.lua", { days = 90, never = false, notify = false })).to_succeed()
  expect(status(s, "usr_never")).to_be("active")
  expect(status(s, "usr_old")).to_be("suspended")
  expect(#s:dispatch_sent()).to_be(0)
end)

test.case("a second run suspends nobody and sends nothing", function()
  local s = test.sandbox { fixtures = people() }
  expect(s:run("suspend-inactive.lua", { days = 90 })).to_succeed()
  local again = s:run("suspend-inactive.lua", { days = 90 })
  expect(again).to_succeed()
  expect(again.writes).to_be(0)
  expect(again.output[#again.output - 1])
    .to_be("suspend-inactive: 0 suspended, 0 kept, of 5 active users inactive 90+ days")
  expect(#s:dispatch_sent()).to_be(1)
end)

test.case("a plan lists the suspensions and changes nothing", function()
  local s = test.sandbox { fixtures = people() }
  local plan = s:run("suspend-inactive.lua", { days = 90 }, { mode = "plan" })
  expect(plan).to_succeed()
  expect(#plan.plan.writes).to_be(5)
  expect(plan.output).to_contain("suspended (planned) old@example.com: last login " .. days_ago(200) .. " (200 days)")
  expect(status(s, "usr_old")).to_be("active")
  local applied = s:run("suspend-inactive.lua", { days = 90 }, { mode = "apply", plan = plan })
  expect(applied).to_succeed()
  expect(status(s, "usr_old")).to_be("suspended")
end)

test.case("on the seeded sandbox it suspends exactly the dormant cohort", function()
  local s = test.sandbox { users = 200 }
  local cutoff = days_ago(90)
  local expected = 0
  for _, u in ipairs(s:list("/users", { status = "active" })) do
    local since = json.isnull(u.last_login_at) and u.created_at or u.last_login_at
    if time.diff(cutoff, since) >= 0 then expected = expected + 1 end
  end
  expect(expected > 20).to_be(true)
  local r = s:run("suspend-inactive.lua", { days = 90, notify = false })
  expect(r).to_succeed()
  expect(r.writes).to_be(expected)
  expect(#s:list("/users", { status = "active" })).to_be(164 - expected)
end)

test.case("days below 1 is refused before anything is read", function()
  local s = test.sandbox {}
  local r = s:run("suspend-inactive.lua", { days = 0 })
  expect(r.exit_code).to_be(1)
  expect(r.failure.message).to_be("parameter 'days' must be 1 or more (days of inactivity), got 0")
  expect(r.reads).to_be(0)
end)
