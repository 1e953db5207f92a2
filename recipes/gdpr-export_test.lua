-- Tests of gdpr-export.lua (hubscript test recipes/).

test.case("writes the bundle of one user to a file", function()
  local s = test.sandbox {}
  local r = s:run("gdpr-export.lua", { user = "ada@example.com", to = "file" })
  expect(r).to_succeed()
  expect(r.output[1]).to_be("exported the GDPR bundle of ada@example.com (usr_ada) to usr_ada-gdpr.jsonl")
  expect(r.output[2]).to_match("^  sessions 3, organizations 1, roles 2, applications 6, audit events %d+$")
  expect(r.exports).to_equal({ { name = "usr_ada-gdpr.jsonl", rows = 1 } })
  expect(r.writes).to_be(0)
end)

test.case("the vault is the default, and a run without one says so", function()
  local s = test.sandbox {}
  local r = s:run("gdpr-export.lua", { user = "usr_ada" })
  expect(r.exit_code).to_be(1)
  expect(r.failure.message).to_match("cannot export vault:gdpr/usr_ada.jsonl: this run has no vault")
end)

test.case("an unknown user stops with not_found", function()
  local s = test.sandbox {}
  expect(s:run("gdpr-export.lua", { user = "nobody@example.com", to = "file" })).to_fail_with("not_found")
end)
