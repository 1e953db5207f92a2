-- Tests of rotate-api-key.lua (hubscript test recipes/; reference: docs/recipe-tests.md).
-- Keys are managed by people: these sandboxes sign in as admin@example.com.

local function live_keys(s, name)
  local ids = {}
  for _, k in ipairs(s:list("/api-keys", {})) do
    if k.name == name then ids[#ids + 1] = k.id end
  end
  return ids
end

test.case("the first run creates the key and stores its secret in the vault only", function()
  local s = test.sandbox { as = "admin@example.com" }
  local r = s:run("rotate-api-key.lua", { name = "ci", store = "hub/keys/ci", permissions = { "users.list" } })
  expect(r).to_succeed()
  expect(r.output[1]).to_match("^created key_[a-z0-9]+ %(ci%), secret stored in the vault entry hub/keys/ci$")
  expect(r.output[2]).to_be("rotate-api-key ci: rotated, 0 revoked, 0 in their grace period")
  expect(s:vault_names()).to_equal({ "hub/keys/ci" })
  expect(s:secret_works("hub/keys/ci")).to_be(true)
  for _, line in ipairs(r.output) do expect(line:find("satk_", 1, true)).to_be(nil) end
end)

test.case("a second run is idempotent: the key is current", function()
  local s = test.sandbox { as = "admin@example.com" }
  expect(s:run("rotate-api-key.lua", { name = "ci", store = "hub/keys/ci", permissions = { "users.list" } })).to_succeed()
  local again = s:run("rotate-api-key.lua", { name = "ci", store = "hub/keys/ci" })
  expect(again).to_succeed()
  expect(again.writes).to_be(0)
  expect(again.output[1]).to_match("^key_[a-z0-9]+ %(ci%) is 0 days old: no rotation %(every 90 days%)$")
end)

test.case("a rotation keeps the old key through the grace period, then revokes it", function()
  local s = test.sandbox { as = "admin@example.com" }
  expect(s:run("rotate-api-key.lua", { name = "ci", store = "hub/keys/ci", permissions = { "audit.view" } })).to_succeed()
  local old = live_keys(s, "ci")[1]
  local rotated = s:run("rotate-api-key.lua", { name = "ci", store = "hub/keys/ci", force = true })
  expect(rotated).to_succeed()
  expect(rotated.output[2]).to_match("^" .. old .. " stays until .+ %(grace period%)$")
  expect(#live_keys(s, "ci")).to_be(2)
  expect(s:secret_works("hub/keys/ci")).to_be(true)
  -- With no grace left, the next run revokes the old key and creates nothing.
  local done = s:run("rotate-api-key.lua", { name = "ci", store = "hub/keys/ci", grace_hours = 0 })
  expect(done).to_succeed()
  expect(done.writes).to_be(1)
  expect(done.output[2]).to_match("^revoked " .. old .. " %(replaced by key_")
  expect(#live_keys(s, "ci")).to_be(1)
  expect(s:secret_works("hub/keys/ci")).to_be(true)
  expect(#s:list("/audit-events", { action = "api_key.created" })).to_be(2)
end)

test.case("killed after the create, then resumed: one key, its secret in the vault", function()
  local s = test.sandbox { as = "admin@example.com" }
  expect(s:run("rotate-api-key.lua", { name = "ci", store = "hub/keys/ci", permissions = { "users.list" } })).to_succeed()
  local params = { name = "ci", store = "hub/keys/ci", force = true, grace_hours = 0 }
  local first = s:run("rotate-api-key.lua", params, { kill_after_writes = 1 })
  expect(first.killed).to_be(true)
  local resumed = s:resume(first.run_id)
  expect(resumed).to_succeed()
  expect(resumed.replayed).to_be(1)
  expect(#s:list("/audit-events", { action = "api_key.created" })).to_be(2)
  expect(#live_keys(s, "ci")).to_be(1)
  expect(s:secret_works("hub/keys/ci")).to_be(true)
end)

test.case("plan mode stores nothing in the vault", function()
  local s = test.sandbox { as = "admin@example.com" }
  local plan = s:run("rotate-api-key.lua", { name = "ci", store = "hub/keys/ci", permissions = { "users.list" } }, { mode = "plan" })
  expect(plan).to_succeed()
  expect(plan.plan.writes[1].summary).to_be("create API key 'ci' (live), secret into the vault entry hub/keys/ci")
  expect(s:vault_names()).to_equal({})
  expect(#live_keys(s, "ci")).to_be(0)
end)

test.case("an API key cannot manage keys", function()
  local s = test.sandbox {}
  local r = s:run("rotate-api-key.lua", { name = "ci", store = "hub/keys/ci", permissions = { "users.list" } })
  expect(r).to_fail_with("user_token_required")
  expect(s:vault_names()).to_equal({})
end)

test.case("a first run needs permissions", function()
  local s = test.sandbox { as = "admin@example.com" }
  local r = s:run("rotate-api-key.lua", { name = "new", store = "hub/keys/new" })
  expect(r).to_fail_with(1)
  expect(r.failure.message).to_match("give its permissions")
end)
