-- Tests of audit-export.lua (hubscript test recipes/; reference: docs/recipe-tests.md).

test.case("exports exactly the events of the range and action, as JSONL", function()
  local s = test.sandbox {
    fixtures = {
      audit_events = {
        { action = "user.suspended", target_user_id = "usr_ada", timestamp = "2026-03-01T10:00:00Z" },
        { action = "user.suspended", target_user_id = "usr_support", timestamp = "2026-03-02T10:00:00Z" },
        { action = "role.assigned", target_user_id = "usr_ada", timestamp = "2026-03-01T11:00:00Z" },
        { action = "user.suspended", target_user_id = "usr_ada", timestamp = "2026-04-01T10:00:00Z" },
      },
    },
  }
  local r = s:run("audit-export.lua", { since = "2026-03-01", ["until"] = "2026-03-31", action = { "user.suspended" } })
  expect(r).to_succeed()
  expect(r.writes).to_be(0)
  expect(r.exports).to_equal({ { name = "audit-events.jsonl", rows = 2 } })
end)

test.case("filters by the target user, given by email, into CSV", function()
  local s = test.sandbox {
    fixtures = {
      audit_events = {
        { action = "user.suspended", target_user_id = "usr_ada", timestamp = "2026-03-01T10:00:00Z" },
        { action = "user.suspended", target_user_id = "usr_support", timestamp = "2026-03-02T10:00:00Z" },
      },
    },
  }
  local r = s:run("audit-export.lua", { since = "2026-03-01", ["until"] = "2026-03-31", user = "ada@example.com",
                                        format = "csv", action = { "user.suspended" } })
  expect(r).to_succeed()
  expect(r.exports).to_equal({ { name = "audit-events.csv", rows = 1 } })
end)

test.case("a bad timestamp or format is refused before anything is read", function()
  local s = test.sandbox {}
  local bad = s:run("audit-export.lua", { since = "yesterday" })
  expect(bad.exit_code).to_be(1)
  expect(bad.failure.message).to_contain("parameter 'since' must be an ISO 8601 timestamp")
  expect(bad.reads).to_be(0)
  local format = s:run("audit-export.lua", { since = "2026-03-01", format = "xml" })
  expect(format.failure.message).to_contain("parameter 'format' must be jsonl or csv, got 'xml'")
end)
