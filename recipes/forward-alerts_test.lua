-- Tests of forward-alerts.lua (hubscript test recipes/; reference: docs/recipe-tests.md).

local since = time.add(time.now(), -3600)

local function alerts()
  return {
    audit_events = {
      { id = "evt_t1", action = "user.suspended", target_user_id = "usr_ada", timestamp = time.add(time.now(), -600) },
      { id = "evt_t2", action = "role.assigned", target_user_id = "usr_ada", timestamp = time.add(time.now(), -300) },
      { id = "evt_t3", action = "user.updated", target_user_id = "usr_ada", timestamp = time.add(time.now(), -200) },
    },
  }
end

test.case("forwards the chosen audit actions to Dispatch, keyed by event id", function()
  local s = test.sandbox { fixtures = alerts() }
  local r = s:run("forward-alerts.lua", { since = since })
  expect(r).to_succeed()
  expect(r.output[#r.output]).to_be("forwarded 2 alerts (0 already sent before)")
  local sent = s:dispatch_sent()
  expect(#sent).to_be(2)
  expect(sent[1].key).to_be("alert-evt_t1")
  expect(sent[1].title).to_be("Hub: user.suspended")
  expect(sent[2].key).to_be("alert-evt_t2")
end)

test.case("a second run forwards nothing new (the checkpoint moved)", function()
  local s = test.sandbox { fixtures = alerts() }
  expect(s:run("forward-alerts.lua", { since = since })).to_succeed()
  local again = s:run("forward-alerts.lua", { since = since })
  expect(again).to_succeed()
  expect(again.output[#again.output]).to_be("forwarded 0 alerts (0 already sent before)")
  expect(#s:dispatch_sent()).to_be(2)
end)

test.case("killed after 3 writes, then resumed: each alert is sent once", function()
  local s = test.sandbox { fixtures = alerts() }
  -- Writes: the two first checkpoints, then a send and a checkpoint per alert.
  local first = s:run("forward-alerts.lua", { since = since }, { kill_after_writes = 3 })
  expect(first.killed).to_be(true)
  local resumed = s:resume(first.run_id)
  expect(resumed).to_succeed()
  local keys = {}
  for _, n in ipairs(s:dispatch_sent()) do keys[#keys + 1] = n.key end
  expect(keys).to_equal { "alert-evt_t1", "alert-evt_t2" }
end)

test.case("rejects a bad since", function()
  local s = test.sandbox {}
  local r = s:run("forward-alerts.lua", { since = "yesterday" })
  expect(r.exit_code).to_be(1)
  expect(r.failure.message).to_contain("parameter 'since' must be an RFC 3339 timestamp")
end)
