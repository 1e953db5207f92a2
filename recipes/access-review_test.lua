-- Tests of access-review.lua's effective-access check (hubscript test recipes/).

test.case("with app, every member gets the Hub's effective access to it", function()
  local s = test.sandbox { users = 40 }
  local r = s:run("access-review.lua", { org = "org_acme", app = "app_wiki" })
  expect(r).to_succeed()
  expect(r.writes).to_be(0)
  local members = #s:list("/organizations/org_acme/members", {})
  local allowed, denied = 0, 0
  for _, m in ipairs(s:list("/organizations/org_acme/members", {})) do
    local eff = s:get("/users/" .. m.user_id .. "/apps/app_wiki/effective-permissions")
    if eff.allowed then allowed = allowed + 1 else denied = denied + 1 end
  end
  expect(allowed + denied).to_be(members)
  expect(r.output).to_contain(("  access to app_wiki: %d allowed, %d not"):format(allowed, denied))
end)

test.case("without app, no access rows and no extra reads", function()
  local s = test.sandbox {}
  local r = s:run("access-review.lua", { org = "org_acme" })
  expect(r).to_succeed()
  for _, line in ipairs(r.output) do expect(line:find("access to", 1, true)).to_be(nil) end
end)
